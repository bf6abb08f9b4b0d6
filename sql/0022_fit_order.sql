-- migrate: online
-- The `fit` order (CONTRACT §9, Sources/Board/PostSort.swift): a page walks each feels-like band by itself
-- (`conditions_band = $b`, or `IS NULL` for the posts without conditions) in `hot` order, and reads the groups
-- (the band outside, its neighbours, the rest, none) in turn (Sources/Board/PostgresPostStore+Fit.swift). One
-- index per filter shape, as for `top` and `hot` in 0021: the band is an equality after the shape's own columns.
-- Public posts for everyone, unlisted ones for moderators and (the author indexes) an author's own.
-- Built CONCURRENTLY (an online migration, Sources/Database/Migrator+Online.swift): the board keeps writing while
-- they build.

CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_public_fit_idx               ON posts (conditions_band, hot_score DESC, id DESC)                        WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_public_weather_fit_idx       ON posts (weather_type, conditions_band, hot_score DESC, id DESC)          WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_public_category_fit_idx      ON posts (category, conditions_band, hot_score DESC, id DESC)              WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_public_region_fit_idx        ON posts (region_id, conditions_band, hot_score DESC, id DESC)             WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_public_wc_fit_idx            ON posts (weather_type, category, conditions_band, hot_score DESC, id DESC) WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_public_rw_fit_idx            ON posts (region_id, weather_type, conditions_band, hot_score DESC, id DESC) WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_public_author_fit_idx        ON posts (author_id, conditions_band, hot_score DESC, id DESC)             WHERE status = 'visible' AND deleted_at IS NULL;

CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_unlisted_fit_idx             ON posts (conditions_band, hot_score DESC, id DESC)                        WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_unlisted_weather_fit_idx     ON posts (weather_type, conditions_band, hot_score DESC, id DESC)          WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_unlisted_category_fit_idx    ON posts (category, conditions_band, hot_score DESC, id DESC)              WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_unlisted_region_fit_idx      ON posts (region_id, conditions_band, hot_score DESC, id DESC)             WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_unlisted_wc_fit_idx          ON posts (weather_type, category, conditions_band, hot_score DESC, id DESC) WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_unlisted_rw_fit_idx          ON posts (region_id, weather_type, conditions_band, hot_score DESC, id DESC) WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS posts_unlisted_author_fit_idx      ON posts (author_id, conditions_band, hot_score DESC, id DESC)             WHERE status <> 'visible' AND deleted_at IS NULL;
