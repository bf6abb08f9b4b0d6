-- POST /v1/posts with a token (rate limits off, term list cached): the route's statements, in its transaction; the
-- post is read back with its images (PostgresPostStore.withMedia).
SELECT s.id AS session_id, a.id, a.kind, a.username, a.display_name, a.role, a.created_at,
       (a.banned AND (a.banned_until IS NULL OR a.banned_until > now())) AS banned_now
FROM sessions s JOIN accounts a ON a.id = s.account_id
WHERE s.token_hash = :token_hash AND s.revoked_at IS NULL;
SELECT 1 AS one FROM regions WHERE id = 1835848;
BEGIN;
INSERT INTO posts (author_id, region_id, weather_type, category, title, body, status, hidden_reason)
SELECT a.id, 1835848, 'snow', 'outfit', '패딩', '눈 오는 날엔 롱패딩', 'visible', NULL
FROM (SELECT id FROM accounts WHERE id = :author AND deleted_at IS NULL FOR KEY SHARE) a RETURNING id \gset
SELECT page.*, m.id, m.owner_id, m.post_id, m.storage_key, m.public, m.width, m.height, m.byte_size, m.blurhash, m.alt, m.created_at, m.retired
FROM (
SELECT p.id, p.author_id, a.display_name AS author_name, p.region_id, r.name_en, r.name_ko, r.country_code,
       p.weather_type, p.category, p.title, p.body, p.status, p.hidden_reason, (p.deleted_at IS NOT NULL) AS deleted,
       p.created_at, p.updated_at, p.edited, p.version
FROM posts p CROSS JOIN LATERAL (SELECT display_name FROM accounts WHERE id = p.author_id OFFSET 0) a JOIN regions r ON r.id = p.region_id
WHERE p.id = :id
) page LEFT JOIN LATERAL (SELECT * FROM media m WHERE m.post_id = page.id OFFSET 0) m ON true
ORDER BY page.id DESC, m.position;
COMMIT;
