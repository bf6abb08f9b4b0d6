-- Notifications (CONTRACT §14): the phones an account's sessions registered for push, and the account's settings.
--
-- A device belongs to the session that registered it: ending the session (a logout revokes it) removes the device in
-- the same transaction, deleting the account deletes its sessions and so its devices, and an upgrade moves them to
-- the new session. The APNs token is the key: registered by another account, the row moves (the earlier account
-- never notifies that phone again). `id` is taken afresh at every registration: newest first is `id DESC`, and an
-- account's eleventh registration drops its smallest.
CREATE TABLE devices (
    token text PRIMARY KEY CHECK (token ~ '^[0-9a-f]{64,200}$'),
    id bigserial NOT NULL UNIQUE,
    account_id bigint NOT NULL REFERENCES accounts (id),
    session_id bigint NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('production', 'sandbox')),
    time_zone text NOT NULL CHECK (length(time_zone) BETWEEN 1 AND 64),
    language text NOT NULL CHECK (language IN ('ko', 'en')),
    units text NOT NULL CHECK (units IN ('metric', 'imperial')),
    registered_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX devices_account_idx ON devices (account_id, id);
CREATE INDEX devices_session_idx ON devices (session_id);

-- One row per account that changed a default (no row: the defaults). Times are minutes after local midnight in each
-- device's time zone; `briefing_days` a bit per weekday (Monday = 1, … Sunday = 64).
CREATE TABLE notification_settings (
    account_id bigint PRIMARY KEY REFERENCES accounts (id),
    replies boolean NOT NULL DEFAULT true,
    report_outcomes boolean NOT NULL DEFAULT true,
    moderation boolean NOT NULL DEFAULT true,
    briefing_enabled boolean NOT NULL DEFAULT false,
    briefing_region_id bigint REFERENCES regions (id),
    briefing_minute smallint CHECK (briefing_minute BETWEEN 0 AND 1439),
    briefing_days smallint NOT NULL DEFAULT 127 CHECK (briefing_days BETWEEN 0 AND 127),
    quiet_start smallint CHECK (quiet_start BETWEEN 0 AND 1439),
    quiet_end smallint CHECK (quiet_end BETWEEN 0 AND 1439),
    CHECK ((quiet_start IS NULL) = (quiet_end IS NULL)),
    CHECK (NOT briefing_enabled OR (briefing_region_id IS NOT NULL AND briefing_minute IS NOT NULL))
);
