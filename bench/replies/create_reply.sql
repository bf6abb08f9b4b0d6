-- POST /v1/posts/{id}/replies with a token (RATE_LIMITS=off, no Idempotency-Key, the term filter's list cached): the
-- route's statements as the server sends them (AuthenticationMiddleware, then PostgresReplyStore.create in one
-- transaction; captured with log_statement = all, and checked against the server by every run). The reply's deferred
-- stream trigger and replies_counted (the post's reply_count) run in it as they do for the server. Posts 100·k + 1
-- (k < :nposts / 100): visible ones, as the wrk script's; the same body.
SELECT s.id AS session_id, a.id, a.kind, a.username, a.display_name, a.role, a.created_at, a.write_lsn,
(a.banned AND (a.banned_until IS NULL OR a.banned_until > now())) AS banned_now,
CASE WHEN a.banned AND (a.banned_until IS NULL OR a.banned_until > now()) THEN a.banned_until END AS banned_until_now
FROM sessions s JOIN accounts a ON a.id = s.account_id
WHERE s.token_hash = :token_hash AND s.revoked_at IS NULL;
\set k random(0, :nposts / 100 - 1)
\set pid 100 * :k + 1
BEGIN;
SELECT 1 FROM accounts WHERE id = :me AND deleted_at IS NULL FOR KEY SHARE;
SELECT author_id, status, hidden_reason, deleted_at IS NOT NULL AS deleted FROM posts WHERE id = :pid FOR NO KEY UPDATE \gset
INSERT INTO replies (post_id, post_author_id, author_id, body, status, hidden_reason)
VALUES (:pid, :author_id, :me, '저도 오늘 롱패딩 입었어요. 바람이 정말 차네요', 'visible', NULL)
RETURNING id \gset
SELECT r.id, r.post_id, r.post_author_id, r.author_id, a.display_name AS author_name, r.body, r.status, r.hidden_reason,
       (r.deleted_at IS NOT NULL) AS deleted, r.created_at, r.updated_at, r.edited, r.version,
       p.title AS post_title, p.status AS post_status, p.hidden_reason AS post_hidden_reason, (p.deleted_at IS NOT NULL) AS post_deleted
FROM replies r
CROSS JOIN LATERAL (SELECT display_name FROM accounts WHERE id = r.author_id OFFSET 0) a
CROSS JOIN LATERAL (SELECT title, status, hidden_reason, deleted_at FROM posts WHERE id = r.post_id OFFSET 0) p WHERE r.id = :id;
COMMIT;
