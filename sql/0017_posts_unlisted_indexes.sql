-- A moderator's lists show every post that is not deleted: the public ones, walked through the public indexes
-- of 0004, merged with the hidden and removed ones, walked through these. They mirror the public indexes on the
-- few unlisted posts, so a filtered moderator list reads about a page of rows at any table size instead of
-- walking the primary key through every post that does not match (255,000 rows at 1M posts, ScalePlanTests).
CREATE INDEX posts_unlisted_idx          ON posts (id DESC)                         WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_weather_idx  ON posts (weather_type, id DESC)           WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_category_idx ON posts (category, id DESC)               WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_region_idx   ON posts (region_id, id DESC)              WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_wc_idx       ON posts (weather_type, category, id DESC) WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_rw_idx       ON posts (region_id, weather_type, id DESC) WHERE status <> 'visible' AND deleted_at IS NULL;
