-- GET /v1/posts/{id}/replies?limit=20[&cursor=…] without a token: the route's statements as the server sends them
-- (PostgresReplyStore.list, on one connection, no transaction; captured with log_statement = all, and checked against
-- the server by every run): the post's access, then a page of its replies after :after, oldest first, in
-- replies_post_idx's order (20 + 1 rows: SQLQuery.page): the visible ones, Visibility's condition for an anonymous reader.
SELECT author_id, status, hidden_reason, deleted_at IS NOT NULL AS deleted FROM posts WHERE id = :pid;
SELECT * FROM (SELECT r.id, r.post_id, r.post_author_id, r.author_id, a.display_name AS author_name, r.body, r.status, r.hidden_reason,
       (r.deleted_at IS NOT NULL) AS deleted, r.created_at, r.updated_at, r.edited, r.version,
       p.title AS post_title, p.status AS post_status, p.hidden_reason AS post_hidden_reason, (p.deleted_at IS NOT NULL) AS post_deleted
FROM replies r
CROSS JOIN LATERAL (SELECT display_name FROM accounts WHERE id = r.author_id OFFSET 0) a
CROSS JOIN LATERAL (SELECT title, status, hidden_reason, deleted_at FROM posts WHERE id = r.post_id OFFSET 0) p WHERE r.post_id >= :pid AND r.post_id <= :pid AND r.id > :after AND r.status = 'visible' AND r.deleted_at IS NULL ORDER BY r.post_id, r.id LIMIT 101) capped LIMIT :lim;
