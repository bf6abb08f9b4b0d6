-- GET /v1/feed?regionId=… without a token (sort=fit, its default): the region's weather comes from the server's memory,
-- and the band outside (:band) fills the page, so the page is one statement, one walk of the fit index of the weather
-- type in hot order (PostgresPostStore.fitGroupQuery for the first group), with or without images (withMedia):
-- the page's 21 posts (20 + 1 to know whether a next page exists), each joined to its images.
SELECT page.*, false AS helped_by_me, m.id, m.owner_id, m.post_id, m.storage_key, m.public, m.width, m.height, m.byte_size, m.blurhash, m.alt, m.created_at, m.retired
FROM (SELECT * FROM (
SELECT p.id, p.author_id, a.display_name AS author_name, p.region_id, r.name_en, r.name_ko, r.country_code,
       p.weather_type, p.category, p.title, p.body, p.status, p.hidden_reason, (p.deleted_at IS NOT NULL) AS deleted,
       p.created_at, p.updated_at, p.edited, p.version,
       p.conditions_weather_type, p.conditions_feels_like, p.conditions_band, p.conditions_observed_at,
       p.helpful_count, p.trusted_helpful_count, p.hot_score
FROM posts p CROSS JOIN LATERAL (SELECT display_name FROM accounts WHERE id = p.author_id OFFSET 0) a JOIN regions r ON r.id = p.region_id
WHERE p.status = 'visible' AND p.deleted_at IS NULL AND p.weather_type = :wt AND p.conditions_band >= :band AND p.conditions_band <= :band
ORDER BY p.weather_type, p.conditions_band, p.hot_score DESC, p.id DESC LIMIT 101) capped LIMIT :lim
) page LEFT JOIN LATERAL (SELECT * FROM media m WHERE m.post_id = page.id OFFSET 0) m ON true
ORDER BY page.hot_score DESC, page.id DESC, m.position;
