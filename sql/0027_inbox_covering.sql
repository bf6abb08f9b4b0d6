-- migrate: online
-- The inbox's unread count (Sources/Board/PostgresReplyStore.swift, `unreadQuery`) walks an account's newest 101
-- inbox replies and leaves out those on its posts that are not shown and those by authors it blocks. With each
-- reply's post and author in the inbox index, and the account's posts that are not shown read once from an index of
-- their own (an author has few: hidden, removed, deleted), the count reads neither a reply nor a post a row: at 10M
-- replies those were 101 replies on 101 pages spread through 1.5 GB and 101 post lookups a request, and the inbox
-- kept ×0.65 of its throughput at 100k (bench/replies).
-- Built CONCURRENTLY (Sources/Database/Migrator+Online.swift): the new inbox index beside the one it replaces, which
-- is dropped after; the new one then takes the old one's name.

CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_unshown_author_idx ON posts (author_id, id) WHERE status <> 'visible' OR deleted_at IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS replies_inbox_covering_idx ON replies (post_author_id, id DESC) INCLUDE (post_id, author_id) WHERE status = 'visible' AND deleted_at IS NULL AND author_id <> post_author_id;
DROP INDEX CONCURRENTLY IF EXISTS replies_inbox_idx;
ALTER INDEX replies_inbox_covering_idx RENAME TO replies_inbox_idx;
