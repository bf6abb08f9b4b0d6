-- PUT /v1/posts/{id}/helpful with a token (rate limits off): the route's statements. The session, then the mark's
-- transaction: the post's own row (visibility: PostService.requireVisible), the insert (sql/0021's triggers update
-- the post's counters) and the state read back. A new mark each time: a random marker and post.
\set acct random(:amin, :amax)
\set post random(1, :maxpost)
SELECT s.id AS session_id, a.id, a.kind, a.username, a.display_name, a.role, a.created_at,
       (a.banned AND (a.banned_until IS NULL OR a.banned_until > now())) AS banned_now
FROM sessions s JOIN accounts a ON a.id = s.account_id
WHERE s.token_hash = :token_hash AND s.revoked_at IS NULL;
BEGIN;
SELECT author_id, status, deleted_at IS NOT NULL AS deleted FROM posts WHERE id = :post;
WITH marker AS (
    SELECT id, (kind = 'registered' OR created_at <= now() - make_interval(secs => 86400::float8)) AS trusted, banned
    FROM accounts WHERE id = :acct AND deleted_at IS NULL FOR SHARE
)
INSERT INTO helpful_marks (post_id, account_id, trusted, counted)
SELECT p.id, marker.id, marker.trusted, marker.trusted AND NOT marker.banned
FROM marker, posts p WHERE p.id = :post AND p.deleted_at IS NULL
ON CONFLICT (post_id, account_id) DO NOTHING
RETURNING post_id;
SELECT p.helpful_count, EXISTS (SELECT 1 FROM helpful_marks h WHERE h.post_id = p.id AND h.account_id = :acct) AS helped
FROM posts p WHERE p.id = :post AND p.deleted_at IS NULL;
COMMIT;
