-- The current-weather cache shared by every server instance (it survives restarts). One row per region and
-- provider: the last successful observation, in metric units, as JSON. Rows are never deleted on provider
-- failures: they are what `stale: true` answers serve.
CREATE TABLE weather_cache (
    region_id    bigint NOT NULL REFERENCES regions (id) ON DELETE CASCADE,
    provider     text NOT NULL,
    observation  jsonb NOT NULL,
    fetched_at   timestamptz NOT NULL,
    PRIMARY KEY (region_id, provider)
);
