-- Sliding-window rate limits (Sources/RateLimit). A bucket keeps the times (µs since 1970) of its hits
-- still inside the window; one INSERT … ON CONFLICT DO UPDATE drops the old ones and counts a new one only
-- while fewer than the limit remain. Unlogged: losing them in a crash only resets limits.
-- The background purger deletes buckets past `expires_at`.
DROP TABLE rate_limits;
CREATE UNLOGGED TABLE rate_limits (
    bucket      text PRIMARY KEY,
    hits        int8[] NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX rate_limits_expires_idx ON rate_limits (expires_at);
