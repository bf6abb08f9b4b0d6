-- The push queue (CONTRACT §14): every notification, written in the same transaction as its cause (a reply, a
-- decision) or by the briefing scheduler, and worked by every instance at once. A worker claims due rows with
-- `FOR UPDATE SKIP LOCKED` and leases them (`leased_until`): a worker that dies leaves its rows to be claimed again
-- when the lease ends, with the same `apns_id` and `collapse_id`, so a resend shows once on the phone. What was
-- answered (`done_at`) is kept a while for the operator, then purged (§7).
CREATE TABLE push_queue (
    id bigserial PRIMARY KEY,
    -- The account the notification is for: a device that moved to another account since is not sent it. (Accounts
    -- are never deleted as rows, so no index serves this key.)
    account_id bigint NOT NULL REFERENCES accounts (id),
    -- Removed with its device (a logout, an account deletion, APNs's 410): nothing queued for it is sent afterwards.
    device_token text NOT NULL REFERENCES devices (token) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('reply', 'replies', 'reportOutcome', 'moderation', 'briefing', 'test')),
    -- Random (gen_random_uuid): no index keeps it unique, every index costs each of the row's writes.
    apns_id uuid NOT NULL,
    collapse_id text NOT NULL CHECK (octet_length(collapse_id) BETWEEN 1 AND 64),
    priority smallint NOT NULL CHECK (priority IN (5, 10)),
    -- The JSON sent, rendered once when queued; NULL for a summary of folded replies, rendered when it goes.
    payload text CHECK (octet_length(payload) <= 4096),
    -- A reply's notification is checked again when it goes: a reply removed, held or blocked since sends nothing.
    reply_id bigint,
    -- A reply's notification past the hourly cap: folded into the device's summary, due when the hour ends.
    fold_until timestamptz,
    -- A summary's replies: how many were folded into it, on which posts.
    folded integer NOT NULL DEFAULT 0,
    post_ids bigint[] NOT NULL DEFAULT '{}',
    send_after timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    leased_until timestamptz,
    -- A summary once claimed: replies folded after that start a summary of their own. (Its own column, not
    -- `attempts = 0`: a claim changes `attempts` and `leased_until` alone, neither in any index, so it is a HOT update.)
    sealed boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    done_at timestamptz,
    -- delivered, unregistered, badDeviceToken, rejected, expired, dropped (no longer to be sent: see `PushQueue`)
    result text
) WITH (fillfactor = 70);  -- room on each page for a claim's new row version: no index entry written
-- What is still to be sent, in the order it is due.
CREATE INDEX push_queue_due_idx ON push_queue (send_after, id) WHERE done_at IS NULL;
-- A device's one open summary: further folded replies are added to it until it is first tried.
CREATE UNIQUE INDEX push_queue_summary_idx ON push_queue (device_token) WHERE kind = 'replies' AND NOT sealed AND done_at IS NULL;
-- A reply notifies each device once, however often it is restored.
CREATE UNIQUE INDEX push_queue_reply_idx ON push_queue (device_token, reply_id) WHERE kind = 'reply';
CREATE INDEX push_queue_done_idx ON push_queue (done_at) WHERE done_at IS NOT NULL;
-- A device's removal (a logout, a 410) takes what is queued for it: found here, not by reading the queue.
CREATE INDEX push_queue_device_idx ON push_queue (device_token);

-- The hourly cap on reply notifications (30 an hour an account): one counter an account, its window starting at
-- the first reply notification after the last window ended. Counted by the reply's own statement (`PushQueue`), so
-- replies at once to one account count one after another.
CREATE TABLE push_reply_windows (
    account_id bigint PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    window_start timestamptz NOT NULL,
    sent integer NOT NULL
);

-- The briefing's schedule: each device's next firing (NULL: no briefing), and the local day it last fired (days
-- since 1970-01-01 on the device's calendar), so a briefing goes once a local day.
ALTER TABLE devices ADD COLUMN next_briefing_at timestamptz, ADD COLUMN briefed_day bigint;
CREATE INDEX devices_briefing_due_idx ON devices (next_briefing_at) WHERE next_briefing_at IS NOT NULL;
