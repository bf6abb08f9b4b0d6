-- migrate: online
-- The inbox's unread count (Sources/Board/PostgresReplyStore.swift, `unreadQuery`) walks an account's newest 101
-- inbox replies and, for each, checks its post is shown (a probe of posts_public_idx) and its author not blocked.
-- With the reply's post and author in the index, that walk never reads the replies' heap: at 10M replies those were
-- 101 pages spread through 1.5 GB a request, and the inbox kept ×0.65 of its throughput at 100k (bench/replies).
-- Built CONCURRENTLY beside the index it replaces, which is dropped after (Sources/Database/Migrator+Online.swift);
-- the new one then takes the old one's name.

CREATE INDEX CONCURRENTLY IF NOT EXISTS replies_inbox_covering_idx ON replies (post_author_id, id DESC) INCLUDE (post_id, author_id) WHERE status = 'visible' AND deleted_at IS NULL AND author_id <> post_author_id;
DROP INDEX CONCURRENTLY IF EXISTS replies_inbox_idx;
ALTER INDEX replies_inbox_covering_idx RENAME TO replies_inbox_idx;
