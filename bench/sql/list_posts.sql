-- GET /v1/posts?weatherType=… without a token: one statement (PostgresPostStore.select), 21 rows (20 + 1 to know
-- whether a next page exists). When some of them have images, a second statement follows (list_media.sql).
SELECT p.id, p.author_id, a.display_name AS author_name, p.region_id, r.name_en, r.name_ko, r.country_code,
       p.weather_type, p.category, p.title, p.body, p.status, p.hidden_reason, (p.deleted_at IS NOT NULL) AS deleted,
       p.created_at, p.updated_at, p.edited, p.version,
       coalesce((SELECT true FROM media m WHERE m.post_id = p.id LIMIT 1), false) AS has_media
FROM posts p JOIN accounts a ON a.id = p.author_id JOIN regions r ON r.id = p.region_id
WHERE p.status = 'visible' AND p.deleted_at IS NULL AND p.weather_type >= :wt AND p.weather_type <= :wt
ORDER BY p.weather_type, p.id DESC LIMIT 21;
