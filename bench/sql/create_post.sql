-- POST /v1/posts with a token (rate limits off, term list cached): the route's statements, in its transaction.
SELECT s.id AS session_id, a.id, a.kind, a.username, a.display_name, a.role, a.created_at,
       (a.banned AND (a.banned_until IS NULL OR a.banned_until > now())) AS banned_now
FROM sessions s JOIN accounts a ON a.id = s.account_id
WHERE s.token_hash = :token_hash AND s.revoked_at IS NULL;
SELECT 1 AS one FROM regions WHERE id = 1835848;
BEGIN;
INSERT INTO posts (author_id, region_id, weather_type, category, title, body, status, hidden_reason)
VALUES (:author, 1835848, 'snow', 'outfit', '패딩', '눈 오는 날엔 롱패딩', 'visible', NULL) RETURNING id \gset
SELECT p.id, p.author_id, a.display_name AS author_name, p.region_id, r.name_en, r.name_ko, r.country_code,
       p.weather_type, p.category, p.title, p.body, p.status, p.hidden_reason, (p.deleted_at IS NOT NULL) AS deleted,
       p.created_at, p.updated_at, p.edited
FROM posts p JOIN accounts a ON a.id = p.author_id JOIN regions r ON r.id = p.region_id
WHERE p.id = :id;
COMMIT;
