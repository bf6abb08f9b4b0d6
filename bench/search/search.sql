-- GET /v1/posts?q=… without a token, newest first: the statement as the server sends it (PostgresPostStore
-- windowedPage inside withMedia), for pgbench. :keys are the terms' keys (SearchTerms.keys), :t1 and :t2 the folded
-- terms (a one-term query repeats its term), :need the page and one more. bench/search/bench.py fills them in.
SELECT page.*, false AS helped_by_me, m.id, m.owner_id, m.post_id, m.storage_key, m.public, m.width, m.height, m.byte_size, m.blurhash, m.alt, m.created_at, m.retired
FROM (
SELECT page.* FROM (SELECT unnest(found) AS id FROM (
WITH RECURSIVE w (round, lo, found, done) AS (SELECT 0, (SELECT coalesce(max(id), 0) FROM posts) + 1, ARRAY[]::bigint[], false
UNION ALL
SELECT w.round + 1, x.lo, w.found || x.ids, cardinality(w.found) + cardinality(x.ids) >= :need OR x.lo <= 1
FROM w CROSS JOIN LATERAL (
    SELECT b.lo, array(
        SELECT s.post_id FROM post_search s JOIN posts p ON p.id = s.post_id
        WHERE search_keys(s.text_doc || E'\n' || s.alt_doc, s.post_id) @> :keys::text[]::bigint[]
          AND search_keys(s.text_doc || E'\n' || s.alt_doc, s.post_id) && ARRAY[search_block(b.level, b.hi >> (10 + 2 * b.level))]
          AND s.post_id + 0 BETWEEN b.lo AND b.hi
          AND (strpos(s.text_doc, :t1) > 0 OR strpos(s.alt_doc, :t1) > 0)
          AND (strpos(s.text_doc, :t2) > 0 OR strpos(s.alt_doc, :t2) > 0)
          AND p.status = 'visible' AND p.deleted_at IS NULL
        ORDER BY s.post_id DESC LIMIT :need - cardinality(w.found)) AS ids
    FROM (
        SELECT h.hi, (h.hi >> (10 + 2 * least(w.round, 8))) << (10 + 2 * least(w.round, 8)) AS lo, least(w.round, 8) AS level
        FROM (SELECT w.lo - 1 AS hi) h
    ) b
    OFFSET 0
) x
WHERE NOT w.done
) SELECT found FROM w WHERE done
) w) f CROSS JOIN LATERAL (
SELECT p.id, p.author_id, a.display_name AS author_name, p.region_id, r.name_en, r.name_ko, r.country_code,
       p.weather_type, p.category, p.title, p.body, p.status, p.hidden_reason, (p.deleted_at IS NOT NULL) AS deleted,
       p.created_at, p.updated_at, p.edited, p.version,
       p.conditions_weather_type, p.conditions_feels_like, p.conditions_band, p.conditions_observed_at,
       p.helpful_count, p.trusted_helpful_count, p.hot_score
FROM posts p CROSS JOIN LATERAL (SELECT display_name FROM accounts WHERE id = p.author_id OFFSET 0) a JOIN regions r ON r.id = p.region_id WHERE p.id = f.id OFFSET 0) page ORDER BY page.id DESC
) page LEFT JOIN LATERAL (SELECT * FROM media m WHERE m.post_id = page.id OFFSET 0) m ON true
ORDER BY page.id DESC, m.position;
