-- Accounts, bearer-token sessions, blocks, idempotency keys and shared rate-limit counters.

CREATE TABLE accounts (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind            text NOT NULL DEFAULT 'anonymous' CHECK (kind IN ('anonymous', 'registered')),
    -- Lower-cased on input; 3–30 of [a-z0-9_]. NULL while anonymous.
    username        text UNIQUE CHECK (username ~ '^[a-z0-9_]{3,30}$'),
    -- Self-describing password hash ($scrypt$ln=…,r=…,p=…$salt$key). Never the password.
    password_hash   text,
    display_name    text NOT NULL,
    role            text NOT NULL DEFAULT 'member' CHECK (role IN ('member', 'moderator', 'admin')),
    banned          boolean NOT NULL DEFAULT false,
    banned_until    timestamptz,
    ban_reason      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'registered') = (username IS NOT NULL AND password_hash IS NOT NULL))
);

-- One row per issued bearer token. Only the SHA-256 of the token is stored, plus a short display prefix.
CREATE TABLE sessions (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id      bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    token_hash      text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    token_prefix    text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    revoked_at      timestamptz
);
CREATE INDEX sessions_account_idx ON sessions (account_id) WHERE revoked_at IS NULL;

CREATE TABLE blocks (
    blocker_id      bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    blocked_id      bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (blocker_id, blocked_id),
    CHECK (blocker_id <> blocked_id)
);

-- Idempotency-Key records. `scope` says whose key it is ('account-create:<client ip>', 'post:<account id>'),
-- so two clients can never collide on the same key. Keys expire after 24 hours.
CREATE TABLE idempotency_keys (
    scope           text NOT NULL,
    key             text NOT NULL,
    request_hash    text NOT NULL,
    resource_id     bigint,
    response_status integer,
    response_body   text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- Fixed-window counters shared by every server process. Unlogged: losing them in a crash only resets limits.
CREATE UNLOGGED TABLE rate_limits (
    bucket          text PRIMARY KEY,
    window_start    timestamptz NOT NULL,
    hits            integer NOT NULL
);
