-- Replies (CONTRACT §13): answers to a post, held to every rule posts are held to.
--
-- A reply is shown only while its post is visible: the views join the post and read its state, so a post that is
-- hidden, removed or deleted takes its replies out of every view at once, and they come back with it, without a
-- statement per reply. `post_author_id` copies the post's author (it never changes) so the inbox walks one index.
CREATE TABLE replies (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    post_id         bigint NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
    post_author_id  bigint NOT NULL,
    author_id       bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    body            text NOT NULL,
    -- visible; hidden (auto-hidden by reports or held by the term filter, pending review); removed (by a moderator)
    status          text NOT NULL DEFAULT 'visible' CHECK (status IN ('visible', 'hidden', 'removed')),
    hidden_reason   text CHECK (hidden_reason IN ('reports', 'filter')),
    deleted_at      timestamptz,
    deleted_by      bigint,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    edited          boolean NOT NULL DEFAULT false,
    -- 1 when created, one more with every edit that changed something: the reply's ETag.
    version         bigint NOT NULL DEFAULT 1,
    -- An evidence reply (its account deleted, a report names it) has no text left.
    CONSTRAINT replies_body_check CHECK (char_length(body) <= 1000 AND (char_length(body) >= 1 OR deleted_at IS NOT NULL))
);
-- A post's replies in conversation order (oldest first), every status: readers filter the few that are not visible.
CREATE INDEX replies_post_idx ON replies (post_id, id);
-- The inbox: replies to an author's posts, newest first, by others, while visible.
CREATE INDEX replies_inbox_idx ON replies (post_author_id, id DESC)
    WHERE status = 'visible' AND deleted_at IS NULL AND author_id <> post_author_id;
-- An account's replies: deletion, bans.
CREATE INDEX replies_author_idx ON replies (author_id, id);

-- Every edit keeps the version it replaced (moderators read them in the queue).
CREATE TABLE reply_revisions (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    reply_id    bigint NOT NULL REFERENCES replies (id) ON DELETE CASCADE,
    body        text NOT NULL,
    version     bigint NOT NULL,
    replaced_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX reply_revisions_reply_idx ON reply_revisions (reply_id, id);

-- `replyCount` on every post object: the post's visible replies, kept exact by the trigger below in the statement
-- that changes a reply, under the post's row lock, so a list reads a column and counts nothing.
ALTER TABLE posts ADD COLUMN reply_count integer NOT NULL DEFAULT 0;

CREATE FUNCTION replies_counted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    delta integer;
BEGIN
    IF TG_OP = 'INSERT' THEN
        delta := (NEW.status = 'visible' AND NEW.deleted_at IS NULL)::integer;
    ELSIF TG_OP = 'DELETE' THEN
        delta := -(OLD.status = 'visible' AND OLD.deleted_at IS NULL)::integer;
    ELSE
        delta := (NEW.status = 'visible' AND NEW.deleted_at IS NULL)::integer - (OLD.status = 'visible' AND OLD.deleted_at IS NULL)::integer;
    END IF;
    IF delta <> 0 THEN
        UPDATE posts SET reply_count = reply_count + delta WHERE id = COALESCE(NEW.post_id, OLD.post_id);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER replies_counted AFTER INSERT OR DELETE OR UPDATE OF status, deleted_at ON replies
    FOR EACH ROW EXECUTE FUNCTION replies_counted();

-- The inbox's read marker: replies with a larger id are unread.
ALTER TABLE accounts ADD COLUMN inbox_read_upto bigint NOT NULL DEFAULT 0;

-- Reports on replies: `reply_id` names the reply, `post_id` its post (so a post kept as evidence keeps its replies'
-- reports too). One report per account per post, and per account per reply.
ALTER TABLE reports ADD COLUMN reply_id bigint REFERENCES replies (id) ON DELETE CASCADE;
DROP INDEX reports_one_per_reporter_idx;
CREATE UNIQUE INDEX reports_one_per_reporter_idx ON reports (post_id, reporter_id) WHERE reporter_id IS NOT NULL AND reply_id IS NULL;
CREATE UNIQUE INDEX reports_reply_reporter_idx ON reports (reply_id, reporter_id) WHERE reporter_id IS NOT NULL AND reply_id IS NOT NULL;
CREATE INDEX reports_reply_idx ON reports (reply_id) WHERE reply_id IS NOT NULL;

ALTER TABLE moderation_log DROP CONSTRAINT moderation_log_target_type_check;
ALTER TABLE moderation_log ADD CONSTRAINT moderation_log_target_type_check CHECK (target_type IN ('post', 'reply', 'account', 'term'));

-- The queue holds one row per reported target: a post (`reply_id` NULL) or a reply (with its post's id), oldest first
-- across both by their first open report. The functions of sql/0019 now group by target; they still lock the posts
-- concerned first, so every change to a post's targets (its own or its replies') waits for the last one to commit.
ALTER TABLE moderation_queue ADD COLUMN reply_id bigint REFERENCES replies (id) ON DELETE CASCADE;
ALTER TABLE moderation_queue DROP CONSTRAINT moderation_queue_pkey;
CREATE UNIQUE INDEX moderation_queue_target_idx ON moderation_queue (post_id, COALESCE(reply_id, 0));
CREATE INDEX moderation_queue_reply_idx ON moderation_queue (reply_id) WHERE reply_id IS NOT NULL;

CREATE OR REPLACE FUNCTION moderation_queue_sync(post_ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM posts WHERE id = ANY (post_ids) ORDER BY id FOR NO KEY UPDATE;
    DELETE FROM moderation_queue q WHERE q.post_id = ANY (post_ids)
        AND NOT EXISTS (SELECT 1 FROM reports r WHERE r.post_id = q.post_id AND r.reply_id IS NOT DISTINCT FROM q.reply_id AND r.status = 'open');
    INSERT INTO moderation_queue (post_id, reply_id, first_report_id, first_reported_at)
    SELECT r.post_id, r.reply_id, min(r.id), min(r.created_at) FROM reports r
    WHERE r.post_id = ANY (post_ids) AND r.status = 'open' GROUP BY r.post_id, r.reply_id
    ON CONFLICT (post_id, COALESCE(reply_id, 0)) DO UPDATE
        SET first_report_id = excluded.first_report_id, first_reported_at = excluded.first_reported_at
    WHERE (moderation_queue.first_report_id, moderation_queue.first_reported_at)
          IS DISTINCT FROM (excluded.first_report_id, excluded.first_reported_at);
END $$;

CREATE OR REPLACE FUNCTION moderation_queue_reports_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM posts WHERE id IN (SELECT post_id FROM inserted_reports WHERE status = 'open') ORDER BY id FOR NO KEY UPDATE;
    INSERT INTO moderation_queue (post_id, reply_id, first_report_id, first_reported_at)
    SELECT post_id, reply_id, min(id), min(created_at) FROM inserted_reports WHERE status = 'open' GROUP BY post_id, reply_id
    ON CONFLICT (post_id, COALESCE(reply_id, 0)) DO UPDATE
        SET first_report_id = least(moderation_queue.first_report_id, excluded.first_report_id),
            first_reported_at = least(moderation_queue.first_reported_at, excluded.first_reported_at)
    WHERE excluded.first_report_id < moderation_queue.first_report_id OR excluded.first_reported_at < moderation_queue.first_reported_at;
    RETURN NULL;
END $$;

-- Live board (§11): `reply` events. A reply's state before and after (as for posts: NULL, visible, filtered,
-- hidden, removed, deleted), with its post's region so the hub visits only the streams that can show it.
ALTER TABLE stream_events ADD COLUMN reply_id bigint;
ALTER TABLE stream_events DROP CONSTRAINT stream_events_kind_check;
ALTER TABLE stream_events ADD CONSTRAINT stream_events_kind_check CHECK (kind IN ('post', 'reply', 'block', 'unblock', 'report', 'resolved'));

CREATE FUNCTION stream_reply_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_commit_order();
    INSERT INTO stream_events (kind, post_id, reply_id, author_id, region_id, old_state, new_state)
    SELECT 'reply', NEW.post_id, NEW.id, NEW.author_id, p.region_id,
           CASE WHEN TG_OP = 'UPDATE' THEN stream_post_state(OLD.status, OLD.hidden_reason, OLD.deleted_at) END,
           stream_post_state(NEW.status, NEW.hidden_reason, NEW.deleted_at)
    FROM posts p WHERE p.id = NEW.post_id;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER replies_stream_insert AFTER INSERT ON replies DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stream_reply_event();
CREATE CONSTRAINT TRIGGER replies_stream_update AFTER UPDATE ON replies DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.version IS DISTINCT FROM NEW.version OR OLD.status IS DISTINCT FROM NEW.status
          OR OLD.hidden_reason IS DISTINCT FROM NEW.hidden_reason OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL))
    EXECUTE FUNCTION stream_reply_event();

CREATE OR REPLACE FUNCTION stream_report_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_commit_order();
    INSERT INTO stream_events (kind, post_id, reply_id) VALUES ('report', NEW.post_id, NEW.reply_id);
    RETURN NULL;
END $$;

-- A decision on a reply is logged with the reply's id; its event names the reply and its post.
CREATE OR REPLACE FUNCTION stream_decision_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_commit_order();
    IF NEW.target_type = 'reply' THEN
        INSERT INTO stream_events (kind, post_id, reply_id, action, moderator_id)
        SELECT 'resolved', r.post_id, r.id, NEW.action, NEW.moderator_id FROM replies r WHERE r.id = NEW.target_id::bigint;
    ELSE
        INSERT INTO stream_events (kind, post_id, action, moderator_id) VALUES ('resolved', NEW.target_id::bigint, NEW.action, NEW.moderator_id);
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER moderation_log_stream ON moderation_log;
CREATE CONSTRAINT TRIGGER moderation_log_stream AFTER INSERT ON moderation_log DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (NEW.target_type IN ('post', 'reply') AND NEW.action IN ('dismiss', 'remove', 'restore'))
    EXECUTE FUNCTION stream_decision_event();
