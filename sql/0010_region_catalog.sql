-- Region search and the bundled catalog (sql/data/regions.csv.gz, loaded by `weatherboard migrate`).
--
-- region_names holds every distinct normalized name of a region (English, Korean, GeoNames alternate
-- names): NFD, combining marks removed, lower-cased, whitespace collapsed, NFC. `GET /v1/regions?q=`
-- normalizes the query the same way and does an index-backed prefix (range) scan. COLLATE "C" makes the
-- order byte order, so `name >= prefix AND name < prefix || U+10FFFF` is exactly "starts with".
-- `is_primary` marks the region's own English or Korean name: those matches rank first. `population` is
-- the region's, copied here (the catalog loader keeps it in step) so a search ranks its matches without
-- touching `regions`; the loader writes the rows in name order, so a prefix's rows share few heap pages.
CREATE TABLE region_names (
    name        text COLLATE "C" NOT NULL,
    region_id   bigint NOT NULL REFERENCES regions (id) ON DELETE CASCADE,
    is_primary  boolean NOT NULL DEFAULT false,
    population  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (name, region_id)
);
CREATE INDEX region_names_region_idx ON region_names (region_id);

-- The seeded Korean cities are searchable before the catalog is loaded.
INSERT INTO region_names (name, region_id, is_primary, population)
SELECT lower(name_en), id, true, population FROM regions
UNION
SELECT name_ko, id, true, population FROM regions WHERE name_ko IS NOT NULL
ON CONFLICT DO NOTHING;

-- Which catalog file is loaded (its checksum), so a second `migrate` skips the work.
CREATE TABLE region_catalog (
    singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    checksum      text NOT NULL,
    region_count  integer NOT NULL,
    loaded_at     timestamptz NOT NULL DEFAULT now()
);
