-- Edits are serialized per post (CONTRACT §4). `version` is 1 when a post is created and one more with
-- every edit that changed something; the API shows it as the post's ETag and checks If-Match against it
-- on the row locked for the edit. Each revision records the version it replaced.
-- Adding a column with a constant default does not rewrite the table.
ALTER TABLE posts ADD COLUMN version bigint NOT NULL DEFAULT 1;
ALTER TABLE post_revisions ADD COLUMN version bigint;

-- Posts edited before this migration: their revisions are versions 1, 2, … in order, the post the one after.
UPDATE post_revisions r SET version = n.version
FROM (SELECT id, row_number() OVER (PARTITION BY post_id ORDER BY id) AS version FROM post_revisions) n
WHERE n.id = r.id;
UPDATE posts p SET version = c.revisions + 1
FROM (SELECT post_id, count(*) AS revisions FROM post_revisions GROUP BY post_id) c
WHERE c.post_id = p.id;

ALTER TABLE post_revisions ALTER COLUMN version SET NOT NULL;
