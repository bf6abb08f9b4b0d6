-- Regions: GeoNames places (id = geonameid). Posts and weather belong to a region; raw client coordinates
-- are never stored. This migration creates the table and seeds the largest Korean cities so the board works
-- on a fresh database; `weatherboard migrate` then loads the full bundled catalog (see sql/data/).
CREATE TABLE regions (
    id            bigint PRIMARY KEY,
    name_en       text NOT NULL,
    name_ko       text,
    country_code  text NOT NULL CHECK (country_code ~ '^[A-Z]{2}$'),
    lat           double precision NOT NULL CHECK (lat BETWEEN -90 AND 90),
    lon           double precision NOT NULL CHECK (lon BETWEEN -180 AND 180),
    timezone      text NOT NULL,
    population    bigint NOT NULL DEFAULT 0,
    -- The point on the unit sphere, for index-backed nearest-neighbour search with cube's <-> operator.
    position      cube NOT NULL
);

CREATE INDEX regions_position_idx ON regions USING gist (position);
CREATE INDEX regions_population_idx ON regions (population DESC, id);

-- Unit-sphere coordinates of a latitude/longitude, in degrees.
CREATE FUNCTION region_position(lat double precision, lon double precision) RETURNS cube
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN cube(ARRAY[cos(radians(lat)) * cos(radians(lon)), cos(radians(lat)) * sin(radians(lon)), sin(radians(lat))]);

INSERT INTO regions (id, name_en, name_ko, country_code, lat, lon, timezone, population, position)
SELECT id, name_en, name_ko, 'KR', lat, lon, 'Asia/Seoul', population, region_position(lat, lon)
FROM (VALUES
    (1835848, 'Seoul',   '서울', 37.566, 126.9784, 10349312),
    (1838524, 'Busan',   '부산', 35.1028, 129.0403, 3678555),
    (1843564, 'Incheon', '인천', 37.45646, 126.70515, 2628000),
    (1835329, 'Daegu',   '대구', 35.87028, 128.59111, 2566540),
    (1835235, 'Daejeon', '대전', 36.32139, 127.41972, 1475221),
    (1841811, 'Gwangju', '광주', 35.15472, 126.91556, 1416938),
    (1833747, 'Ulsan',   '울산', 35.53722, 129.31667, 962865),
    (1835553, 'Suwon',   '수원', 37.29111, 127.00889, 1242724),
    (1846266, 'Jeju City', '제주', 33.50972, 126.52194, 408364)
) AS seed(id, name_en, name_ko, lat, lon, population);
