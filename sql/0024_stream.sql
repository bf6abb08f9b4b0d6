-- Live board (CONTRACT §11): every change the streams show is a row of `stream_events`, written by the triggers
-- below in the transaction that makes the change, so an event exists exactly when its change committed.
--
-- Order. Event ids are given in commit order: the triggers are deferred to the commit, and each first takes one
-- transaction-level advisory lock, held until the transaction has committed (or rolled back). So the commits of
-- transactions that write events are serialized, and once an id is visible no smaller id can ever appear: a reader
-- that has sent everything up to id N and reads `id > N` misses nothing and repeats nothing, however the transactions
-- interleaved. A plain sequence drawn during the transaction does not promise that: one that drew 7 may commit after
-- one that drew 8 was sent, and a client resuming after 8 would never see 7.
CREATE TABLE stream_events (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- post: a post's state changed (created, edited, hidden, removed, restored, deleted);
    -- block / unblock: `audience` blocked or unblocked `author_id`;
    -- report: a report on `post_id` arrived; resolved: a moderator decided on `post_id`.
    kind         text NOT NULL CHECK (kind IN ('post', 'block', 'unblock', 'report', 'resolved')),
    post_id      bigint,
    author_id    bigint,
    region_id    bigint,
    -- The post before and after the change: NULL (did not exist), 'visible', 'filtered' (held by the term filter, shown
    -- to its author as visible), 'hidden', 'removed', 'deleted'; and its weather type and category (an edit may move
    -- it into or out of a stream's filters).
    old_state    text,
    old_weather  text,
    old_category text,
    new_state    text,
    new_weather  text,
    new_category text,
    -- Only this account's streams see the event (blocks).
    audience     bigint,
    action       text,
    moderator_id bigint,
    created_at   timestamptz NOT NULL DEFAULT now()
);
-- The purger trims by age, walking the ids from the oldest (ids and times rise together).

-- The highest id the purger has deleted: a client resuming from below it has missed events (`reset`).
CREATE TABLE stream_trim (
    one  boolean PRIMARY KEY DEFAULT true CHECK (one),
    id   bigint NOT NULL
);
INSERT INTO stream_trim (id) VALUES (0);

-- Serializes the commits of transactions that write events (see the top). Held until the transaction ends.
CREATE FUNCTION stream_commit_order() RETURNS void LANGUAGE sql AS $$ SELECT pg_advisory_xact_lock(7453982740319417185) $$;

CREATE FUNCTION stream_post_state(status text, hidden_reason text, deleted_at timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN deleted_at IS NOT NULL THEN 'deleted' WHEN status = 'hidden' AND hidden_reason = 'filter' THEN 'filtered' ELSE status END
$$;

CREATE FUNCTION stream_post_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_commit_order();
    IF TG_OP = 'INSERT' THEN
        INSERT INTO stream_events (kind, post_id, author_id, region_id, new_state, new_weather, new_category)
        VALUES ('post', NEW.id, NEW.author_id, NEW.region_id,
                stream_post_state(NEW.status, NEW.hidden_reason, NEW.deleted_at), NEW.weather_type, NEW.category);
    ELSE
        INSERT INTO stream_events (kind, post_id, author_id, region_id, old_state, old_weather, old_category, new_state, new_weather, new_category)
        VALUES ('post', NEW.id, NEW.author_id, NEW.region_id,
                stream_post_state(OLD.status, OLD.hidden_reason, OLD.deleted_at), OLD.weather_type, OLD.category,
                stream_post_state(NEW.status, NEW.hidden_reason, NEW.deleted_at), NEW.weather_type, NEW.category);
    END IF;
    RETURN NULL;
END $$;
-- Constraint triggers, deferred: they run at commit, so the lock is held only while the transaction commits.
CREATE CONSTRAINT TRIGGER posts_stream_insert AFTER INSERT ON posts DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stream_post_event();
-- An edit bumps `version`; moderation and deletion change the state. Helpful marks, scores and conditions are not
-- changes the streams show.
CREATE CONSTRAINT TRIGGER posts_stream_update AFTER UPDATE ON posts DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (OLD.version IS DISTINCT FROM NEW.version OR OLD.status IS DISTINCT FROM NEW.status
          OR OLD.hidden_reason IS DISTINCT FROM NEW.hidden_reason OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
          OR OLD.weather_type IS DISTINCT FROM NEW.weather_type OR OLD.category IS DISTINCT FROM NEW.category)
    EXECUTE FUNCTION stream_post_event();

CREATE FUNCTION stream_block_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_commit_order();
    IF TG_OP = 'INSERT' THEN
        INSERT INTO stream_events (kind, author_id, audience) VALUES ('block', NEW.blocked_id, NEW.blocker_id);
    ELSE
        INSERT INTO stream_events (kind, author_id, audience) VALUES ('unblock', OLD.blocked_id, OLD.blocker_id);
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER blocks_stream AFTER INSERT OR DELETE ON blocks DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stream_block_event();

CREATE FUNCTION stream_report_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_commit_order();
    INSERT INTO stream_events (kind, post_id) VALUES ('report', NEW.post_id);
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER reports_stream AFTER INSERT ON reports DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION stream_report_event();

CREATE FUNCTION stream_decision_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM stream_commit_order();
    INSERT INTO stream_events (kind, post_id, action, moderator_id) VALUES ('resolved', NEW.target_id::bigint, NEW.action, NEW.moderator_id);
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER moderation_log_stream AFTER INSERT ON moderation_log DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (NEW.target_type = 'post' AND NEW.action IN ('dismiss', 'remove', 'restore'))
    EXECUTE FUNCTION stream_decision_event();

-- Wakes every instance's listener at commit (one notification a transaction: PostgreSQL folds equal payloads). The
-- payload is empty: listeners read the rows, which are never larger than the 8,000-byte limit.
CREATE FUNCTION stream_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('weatherboard_stream', '');
    RETURN NULL;
END $$;
CREATE TRIGGER stream_events_notify AFTER INSERT ON stream_events FOR EACH STATEMENT EXECUTE FUNCTION stream_notify();
