-- Grows the board to :target posts for bench/scale.py (psql -v target=N -v me=ID). Run again with a larger
-- target to grow it. The mix: 1,000 authors plus :me (every 10th post is :me's, so "my posts" pages through an
-- author with a tenth of the table; every 20th is scale-author-500's, the author the `authorId` shapes filter on),
-- the 200 most populous regions (a quarter of the posts in the first, the region the `regionId` shapes filter on),
-- weather types and categories spread evenly and independently, 1% hidden, 0.5% removed, 0.5% deleted, and two
-- images on every 'mist' post. Every filtered shape has full pages already at 10k posts, so a ratio against 10k
-- measures the table growing, not a partial first page filling up. For the ranked orders (CONTRACT §9): a post a
-- second from 2026-01-01 in id order, trusted marks on every fifth (0–12), and conditions on three in four, their
-- feels-like spread evenly over -10.0 to 34.9 °C (every band; the fake provider's 8.5 °C is `veryCold`).
\set ON_ERROR_STOP on
INSERT INTO accounts (display_name)
SELECT 'scale-author-' || i FROM generate_series(1, 1000 - (SELECT count(*) FROM accounts WHERE display_name LIKE 'scale-author-%')) AS i;

SELECT (SELECT array_agg(id ORDER BY id) FROM accounts WHERE display_name LIKE 'scale-author-%') AS authors,
       (SELECT array_agg(id ORDER BY population DESC, id) FROM (SELECT id, population FROM regions ORDER BY population DESC, id LIMIT 200) r) AS regions,
       (SELECT id FROM accounts WHERE display_name = 'scale-author-500') AS heavy \gset

SELECT coalesce(max(id), 0) AS start FROM posts \gset

-- Seeded posts are not live board events (sql/0024's deferred triggers would queue one per row until the commit).
ALTER TABLE posts DISABLE TRIGGER posts_stream_insert;

INSERT INTO posts (author_id, region_id, weather_type, category, title, body, status, hidden_reason, deleted_at, deleted_by,
                   created_at, trusted_helpful_count, helpful_count,
                   conditions_weather_type, conditions_feels_like, conditions_band, conditions_observed_at)
SELECT CASE WHEN i % 10 = 0 THEN :me WHEN i % 20 = 1 THEN :heavy ELSE (:'authors'::int8[])[1 + i % 1000] END,
       CASE WHEN i % 4 = 2 THEN (:'regions'::int8[])[1] ELSE (:'regions'::int8[])[1 + (i / 7) % 200] END,
       (ARRAY['clearSky','fewClouds','scatteredClouds','brokenClouds','showerRain','rain','thunderStorm','snow','mist'])[1 + i % 9],
       (ARRAY['food','place','music','outfit','activity'])[1 + (i / 9) % 5],
       CASE WHEN i % 3 = 0 THEN NULL ELSE '비 오는 날 ' || i END,
       '파전에 막걸리, seeded post ' || i,
       CASE WHEN i % 100 = 17 THEN 'hidden' WHEN i % 200 = 33 THEN 'removed' ELSE 'visible' END,
       CASE WHEN i % 100 = 17 THEN 'reports' END,
       CASE WHEN i % 200 = 51 THEN now() END,
       CASE WHEN i % 200 = 51 THEN :me END,
       '2026-01-01'::timestamptz + make_interval(secs => i),
       CASE WHEN i % 5 = 0 THEN i % 13 ELSE 0 END,
       CASE WHEN i % 5 = 0 THEN i % 13 + i % 3 ELSE 0 END,
       CASE WHEN i % 4 <> 3 THEN (ARRAY['clearSky','fewClouds','scatteredClouds','brokenClouds','showerRain','rain','thunderStorm','snow','mist'])[1 + i % 9] END,
       f.feels,
       CASE WHEN f.feels >= 28 THEN 'hot' WHEN f.feels >= 23 THEN 'warm' WHEN f.feels >= 20 THEN 'mild' WHEN f.feels >= 17 THEN 'cool'
            WHEN f.feels >= 12 THEN 'chilly' WHEN f.feels >= 9 THEN 'cold' WHEN f.feels >= 5 THEN 'veryCold' WHEN f.feels IS NOT NULL THEN 'freezing' END,
       CASE WHEN i % 4 <> 3 THEN '2026-01-01'::timestamptz + make_interval(secs => i) END
FROM generate_series((SELECT count(*) FROM posts) + 1, :target) AS i
CROSS JOIN LATERAL (SELECT CASE WHEN i % 4 <> 3 THEN (((i * 13) % 450) - 100) / 10.0 END::numeric(4,1) AS feels) f;

INSERT INTO media (owner_id, post_id, position, storage_key, width, height, byte_size, preview_byte_size, blurhash, alt)
SELECT p.author_id, p.id, k, md5(p.id::text || '-' || k), 2048, 1536, 412345, 41234, 'LEHV6nWB2yk8pyo0adR*.7kCMdnj', '창밖의 안개 ' || k
FROM posts p CROSS JOIN generate_series(0, 1) AS k WHERE p.id > :start AND p.weather_type = 'mist';

ALTER TABLE posts ENABLE TRIGGER posts_stream_insert;

VACUUM ANALYZE posts;
VACUUM ANALYZE media;
ANALYZE accounts;
