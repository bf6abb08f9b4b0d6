-- Posts: recommendations tagged by weather type and category, in a region. Newest first by id (keyset).

CREATE TABLE posts (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    author_id       bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    region_id       bigint NOT NULL REFERENCES regions (id),
    weather_type    text NOT NULL CHECK (weather_type IN
                        ('clearSky', 'fewClouds', 'scatteredClouds', 'brokenClouds', 'showerRain', 'rain', 'thunderStorm', 'snow', 'mist')),
    category        text NOT NULL CHECK (category IN ('food', 'place', 'music', 'outfit', 'activity')),
    title           text CHECK (char_length(title) BETWEEN 1 AND 100),
    body            text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 2000),
    -- visible; hidden (auto-hidden by reports or held by the term filter, pending review); removed (by a moderator)
    status          text NOT NULL DEFAULT 'visible' CHECK (status IN ('visible', 'hidden', 'removed')),
    hidden_reason   text CHECK (hidden_reason IN ('reports', 'filter')),
    -- Soft delete by the author or a moderator: the row stays for moderation and audit.
    deleted_at      timestamptz,
    deleted_by      bigint,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    edited          boolean NOT NULL DEFAULT false
);

-- Public lists read only visible, undeleted posts, newest first. One partial index per filter serves every
-- combination without a sort: the planner walks the most selective one in id order and filters the rest.
CREATE INDEX posts_public_idx          ON posts (id DESC)                        WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_weather_idx  ON posts (weather_type, id DESC)          WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_category_idx ON posts (category, id DESC)              WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_region_idx   ON posts (region_id, id DESC)             WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_wc_idx       ON posts (weather_type, category, id DESC) WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_rw_idx       ON posts (region_id, weather_type, id DESC) WHERE status = 'visible' AND deleted_at IS NULL;
-- An author's own posts (every status) and authorId filters.
CREATE INDEX posts_author_idx          ON posts (author_id, id DESC);

-- Every edit keeps the version it replaced.
CREATE TABLE post_revisions (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    post_id         bigint NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
    weather_type    text NOT NULL,
    category        text NOT NULL,
    title           text,
    body            text NOT NULL,
    -- When this version was current: from its creation or previous edit until `replaced_at`.
    replaced_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX post_revisions_post_idx ON post_revisions (post_id, id);
