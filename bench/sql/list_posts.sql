-- GET /v1/posts?weatherType=… without a token: one statement (PostgresPostStore.select with its media column,
-- MediaRecords.perPost), 21 rows (20 + 1 to know whether a next page exists).
SELECT p.id, p.author_id, a.display_name AS author_name, p.region_id, r.name_en, r.name_ko, r.country_code,
       p.weather_type, p.category, p.title, p.body, p.status, p.hidden_reason, (p.deleted_at IS NOT NULL) AS deleted,
       p.created_at, p.updated_at, p.edited, p.version,
       (SELECT json_agg(json_build_array(m.id, m.storage_key, m.public, m.width, m.height, m.byte_size, m.blurhash, m.alt,
                                         (extract(epoch FROM m.created_at) * 1000000)::int8, m.owner_id, m.retired) ORDER BY m.position)
        FROM media m WHERE m.post_id = p.id) AS media
FROM posts p JOIN accounts a ON a.id = p.author_id JOIN regions r ON r.id = p.region_id
WHERE p.status = 'visible' AND p.deleted_at IS NULL AND p.weather_type >= :wt AND p.weather_type <= :wt
ORDER BY p.weather_type, p.id DESC LIMIT 21;
