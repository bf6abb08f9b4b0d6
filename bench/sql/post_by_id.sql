-- GET /v1/posts/{id} without a token: one statement (PostgresPostStore.withMedia around select).
SELECT page.*, false AS helped_by_me, m.id, m.owner_id, m.post_id, m.storage_key, m.public, m.width, m.height, m.byte_size, m.blurhash, m.alt, m.created_at, m.retired
FROM (
SELECT p.id, p.author_id, a.display_name AS author_name, p.region_id, r.name_en, r.name_ko, r.country_code,
       p.weather_type, p.category, p.title, p.body, p.status, p.hidden_reason, (p.deleted_at IS NOT NULL) AS deleted,
       p.created_at, p.updated_at, p.edited, p.version,
       p.conditions_weather_type, p.conditions_feels_like, p.conditions_band, p.conditions_observed_at,
       p.helpful_count, p.trusted_helpful_count, p.hot_score
FROM posts p CROSS JOIN LATERAL (SELECT display_name FROM accounts WHERE id = p.author_id OFFSET 0) a JOIN regions r ON r.id = p.region_id
WHERE p.id = :id
) page LEFT JOIN LATERAL (SELECT * FROM media m WHERE m.post_id = page.id OFFSET 0) m ON true
ORDER BY page.id DESC, m.position;
