-- Reports, the moderation log and the blocked-term filter.

CREATE TABLE reports (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    post_id         bigint NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
    -- NULL for reports the term filter files, and after the reporter deletes their account.
    reporter_id     bigint REFERENCES accounts (id) ON DELETE SET NULL,
    reason          text NOT NULL CHECK (reason IN ('spam', 'abuse', 'hate', 'sexual', 'misinformation', 'other', 'filter')),
    note            text CHECK (char_length(note) <= 500),
    -- The post as it was when reported; later edits do not change what was reported.
    reported_title  text,
    reported_body   text NOT NULL,
    status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'dismissed', 'actioned')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    resolved_at     timestamptz,
    resolved_by     bigint REFERENCES accounts (id) ON DELETE SET NULL
);
-- One report per account per post, whatever its outcome.
CREATE UNIQUE INDEX reports_one_per_reporter_idx ON reports (post_id, reporter_id) WHERE reporter_id IS NOT NULL;
-- The queue: open reports grouped by post, oldest first.
CREATE INDEX reports_open_idx ON reports (post_id, id) WHERE status = 'open';
CREATE INDEX reports_reporter_idx ON reports (reporter_id, id);

CREATE TABLE moderation_log (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- NULL for operator actions taken with the `weatherboard` command.
    moderator_id    bigint REFERENCES accounts (id) ON DELETE SET NULL,
    action          text NOT NULL,
    target_type     text NOT NULL CHECK (target_type IN ('post', 'account', 'term')),
    target_id       text NOT NULL,
    note            text,
    created_at      timestamptz NOT NULL DEFAULT now()
);

-- Terms that hold a new or edited post for review. Stored NFC-normalized and lower-cased.
CREATE TABLE blocked_terms (
    term            text PRIMARY KEY CHECK (char_length(term) BETWEEN 1 AND 100),
    created_at      timestamptz NOT NULL DEFAULT now()
);
