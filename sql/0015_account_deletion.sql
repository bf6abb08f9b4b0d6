-- Account deletion keeps evidence (CONTRACT §3) and stays fast however large the tables are.
--
-- A deleted account's row stays as an id only (no username, password or name): reports, the moderation log
-- and the posts kept as evidence point at it. Its reported posts stay, deleted and without text; the
-- reports keep their own snapshots until REPORT_EVIDENCE_DAYS after resolution.
ALTER TABLE accounts ADD COLUMN deleted_at timestamptz;
ALTER TABLE accounts DROP CONSTRAINT accounts_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_credentials_check
    CHECK (deleted_at IS NOT NULL OR (kind = 'registered') = (username IS NOT NULL AND password_hash IS NOT NULL));

-- An evidence post has no text left.
ALTER TABLE posts DROP CONSTRAINT posts_body_check;
ALTER TABLE posts ADD CONSTRAINT posts_body_check
    CHECK (char_length(body) <= 2000 AND (char_length(body) >= 1 OR deleted_at IS NOT NULL));

-- An index for every path from an account (or a post) to the rows that name it, so deleting one reads only
-- its own rows: sessions (the old index held only live ones), blocks against the account, reports on a
-- post (the old indexes held open or reporter-made ones), and the ON DELETE SET NULL paths.
DROP INDEX sessions_account_idx;
CREATE INDEX sessions_account_idx ON sessions (account_id);
CREATE INDEX blocks_blocked_idx ON blocks (blocked_id);
CREATE INDEX reports_post_idx ON reports (post_id);
CREATE INDEX reports_resolved_by_idx ON reports (resolved_by) WHERE resolved_by IS NOT NULL;
CREATE INDEX moderation_log_moderator_idx ON moderation_log (moderator_id) WHERE moderator_id IS NOT NULL;

-- What the background purger looks for.
CREATE INDEX sessions_revoked_idx ON sessions (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX reports_evidence_idx ON reports (resolved_at) WHERE status <> 'open' AND reported_body <> '';

-- Idempotency keys are secrets (a replay hands out a token): only their SHA-256 is stored.
UPDATE idempotency_keys SET key = encode(sha256(convert_to(key, 'UTF8')), 'hex');
