-- The moderation queue: one row per post with open reports, kept exact by PostgreSQL itself (the triggers
-- below), so a queue page walks `moderation_queue_order_idx` and reads about a page of rows however many reports
-- are open. Aggregating every open report on every request served 197 pages/s at 17,641 open reports and got
-- linearly slower in a spam wave. The cursor is unchanged: the post's first open report id.
CREATE TABLE moderation_queue (
    post_id            bigint PRIMARY KEY REFERENCES posts (id) ON DELETE CASCADE,
    -- min(id) and min(created_at) of the post's open reports (each on its own, as the queue always answered).
    first_report_id    bigint NOT NULL,
    first_reported_at  timestamptz NOT NULL
);
CREATE INDEX moderation_queue_order_idx ON moderation_queue (first_report_id);

-- Makes the rows of these posts exact from their open reports. The posts are locked first, in id order, and every
-- trigger below takes the same lock before it touches the queue: whoever changes a post's open reports waits
-- until the last change to them has committed, then reads them afresh (each statement here has a new snapshot
-- under READ COMMITTED). Without the lock a decision that could not yet see a report in flight deleted the
-- post's row after that report committed, and the post dropped out of the queue with a report open.
CREATE FUNCTION moderation_queue_sync(post_ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM posts WHERE id = ANY (post_ids) ORDER BY id FOR NO KEY UPDATE;
    DELETE FROM moderation_queue q WHERE q.post_id = ANY (post_ids)
        AND NOT EXISTS (SELECT 1 FROM reports r WHERE r.post_id = q.post_id AND r.status = 'open');
    INSERT INTO moderation_queue (post_id, first_report_id, first_reported_at)
    SELECT r.post_id, min(r.id), min(r.created_at) FROM reports r
    WHERE r.post_id = ANY (post_ids) AND r.status = 'open' GROUP BY r.post_id
    ON CONFLICT (post_id) DO UPDATE SET first_report_id = excluded.first_report_id, first_reported_at = excluded.first_reported_at
    WHERE (moderation_queue.first_report_id, moderation_queue.first_reported_at)
          IS DISTINCT FROM (excluded.first_report_id, excluded.first_reported_at);
END $$;

-- New open reports can only bring a post's first report earlier: insert the post, or lower its row.
CREATE FUNCTION moderation_queue_reports_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM posts WHERE id IN (SELECT post_id FROM inserted_reports WHERE status = 'open') ORDER BY id FOR NO KEY UPDATE;
    INSERT INTO moderation_queue (post_id, first_report_id, first_reported_at)
    SELECT post_id, min(id), min(created_at) FROM inserted_reports WHERE status = 'open' GROUP BY post_id
    ON CONFLICT (post_id) DO UPDATE
        SET first_report_id = least(moderation_queue.first_report_id, excluded.first_report_id),
            first_reported_at = least(moderation_queue.first_reported_at, excluded.first_reported_at)
    WHERE excluded.first_report_id < moderation_queue.first_report_id OR excluded.first_reported_at < moderation_queue.first_reported_at;
    RETURN NULL;
END $$;

-- Reports that left (or entered) 'open', or whose post, id or time changed: their posts are made exact again.
-- Updates that leave the open set as it was (a reporter's account deleted, evidence purged) touch nothing.
CREATE FUNCTION moderation_queue_reports_updated() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    affected bigint[];
BEGIN
    WITH was_open AS (SELECT id, post_id, created_at FROM old_reports WHERE status = 'open'),
         now_open AS (SELECT id, post_id, created_at FROM new_reports WHERE status = 'open')
    SELECT array_agg(DISTINCT changed.post_id) INTO affected
    FROM ((SELECT * FROM was_open EXCEPT ALL SELECT * FROM now_open) UNION ALL (SELECT * FROM now_open EXCEPT ALL SELECT * FROM was_open)) changed;
    IF affected IS NOT NULL THEN
        PERFORM moderation_queue_sync(affected);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION moderation_queue_reports_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    affected bigint[];
BEGIN
    SELECT array_agg(DISTINCT post_id) INTO affected FROM deleted_reports WHERE status = 'open';
    IF affected IS NOT NULL THEN
        PERFORM moderation_queue_sync(affected);
    END IF;
    RETURN NULL;
END $$;

-- Once per statement, with the statement's rows: a decision resolving 20,000 reports recomputes its post once.
CREATE TRIGGER reports_queue_insert AFTER INSERT ON reports REFERENCING NEW TABLE AS inserted_reports
    FOR EACH STATEMENT EXECUTE FUNCTION moderation_queue_reports_inserted();
CREATE TRIGGER reports_queue_update AFTER UPDATE ON reports REFERENCING OLD TABLE AS old_reports NEW TABLE AS new_reports
    FOR EACH STATEMENT EXECUTE FUNCTION moderation_queue_reports_updated();
CREATE TRIGGER reports_queue_delete AFTER DELETE ON reports REFERENCING OLD TABLE AS deleted_reports
    FOR EACH STATEMENT EXECUTE FUNCTION moderation_queue_reports_deleted();

-- The triggers above hold off writers of `reports` until this migration commits, so the backfill is exact.
INSERT INTO moderation_queue (post_id, first_report_id, first_reported_at)
SELECT post_id, min(id), min(created_at) FROM reports WHERE status = 'open' GROUP BY post_id;
