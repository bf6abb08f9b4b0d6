-- GET /v1/accounts/me/inbox?limit=20 with the post author's token: the route's statements as the server sends them
-- (AuthenticationMiddleware, then PostgresReplyStore.inbox on one connection, no transaction; captured with
-- log_statement = all, and checked against the server by every run): the session, a page of the inbox newest first
-- in replies_inbox_idx's order (20 + 1 rows), and the unread count among the inbox's newest 101 (inbox_read_upto is
-- 0: all of them unread, the badge's "99+"), read from the inbox index alone (sql/0027), with the author's blocks and posts not shown read once each (a post of the author's held by the
-- term filter acts as visible to its author: Visibility.treatedAsVisibleByAuthor).
SELECT s.id AS session_id, a.id, a.kind, a.username, a.display_name, a.role, a.created_at, a.write_lsn,
(a.banned AND (a.banned_until IS NULL OR a.banned_until > now())) AS banned_now,
CASE WHEN a.banned AND (a.banned_until IS NULL OR a.banned_until > now()) THEN a.banned_until END AS banned_until_now
FROM sessions s JOIN accounts a ON a.id = s.account_id
WHERE s.token_hash = :token_hash AND s.revoked_at IS NULL;
SELECT * FROM (SELECT r.id, r.post_id, r.post_author_id, r.author_id, a.display_name AS author_name, r.body, r.status, r.hidden_reason,
       (r.deleted_at IS NOT NULL) AS deleted, r.created_at, r.updated_at, r.edited, r.version,
       p.title AS post_title, p.status AS post_status, p.hidden_reason AS post_hidden_reason, (p.deleted_at IS NOT NULL) AS post_deleted
FROM replies r
CROSS JOIN LATERAL (SELECT display_name FROM accounts WHERE id = r.author_id OFFSET 0) a
CROSS JOIN LATERAL (SELECT title, status, hidden_reason, deleted_at FROM posts WHERE id = r.post_id OFFSET 0) p WHERE r.post_author_id >= :me AND r.post_author_id <= :me AND r.status = 'visible' AND r.deleted_at IS NULL AND r.author_id <> r.post_author_id
  AND r.author_id NOT IN (SELECT b.blocked_id FROM blocks b WHERE b.blocker_id = :me) AND (p.deleted_at IS NULL AND (p.status = 'visible' OR (p.status = 'hidden' AND p.hidden_reason IS NOT DISTINCT FROM 'filter'))) ORDER BY r.post_author_id, r.id DESC LIMIT 101) capped LIMIT :lim;
SELECT count(*) FILTER (WHERE newest.id > (SELECT inbox_read_upto FROM accounts WHERE id = :me)) AS n FROM (
    SELECT r.id FROM replies r WHERE r.post_author_id >= :me AND r.post_author_id <= :me AND r.status = 'visible' AND r.deleted_at IS NULL AND r.author_id <> r.post_author_id
  AND r.author_id NOT IN (SELECT b.blocked_id FROM blocks b WHERE b.blocker_id = :me)
  AND r.post_id NOT IN (SELECT u.id FROM posts u WHERE u.author_id = :me AND (u.status <> 'visible' OR u.deleted_at IS NOT NULL) AND NOT (u.deleted_at IS NULL AND (u.status = 'visible' OR (u.status = 'hidden' AND u.hidden_reason IS NOT DISTINCT FROM 'filter')))) ORDER BY r.post_author_id, r.id DESC LIMIT 101) newest;
