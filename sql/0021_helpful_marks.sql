-- Helpful marks (CONTRACT §9) and the stored scores that rank posts by them.
--
-- Each post carries its counters: `helpful_count` (every mark) and `trusted_helpful_count` (the marks that count
-- toward ranking: trusted when made — registered, or anonymous older than REPORT_TRUST_AGE_SECONDS — or since
-- the account registered, and of an account neither banned nor deleted), and `hot_score`, derived from them.
-- The triggers below keep the counters exact in the transaction that changes a mark, so a ranked page walks an
-- index on the stored score and never counts anything.
CREATE TABLE helpful_marks (
    post_id     bigint NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
    account_id  bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    -- Its account was trusted when it marked, or has registered since.
    trusted     boolean NOT NULL,
    -- Counts toward `trusted_helpful_count`: trusted, and its account is not banned.
    counted     boolean NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (post_id, account_id)
);
-- From an account to its marks: ban, unban, registration and deletion walk it.
CREATE INDEX helpful_marks_account_idx ON helpful_marks (account_id, post_id);
-- What the purger promotes once their anonymous accounts are old enough to be trusted.
CREATE INDEX helpful_marks_untrusted_idx ON helpful_marks (created_at) WHERE NOT trusted;

-- The `hot` score (CONTRACT §9): a trusted mark is worth 45000 × log10(2) s ≈ half a day of age at the first
-- doubling. Unix seconds are the same whatever the time zone, so the function is immutable, as a stored
-- generated column needs.
CREATE FUNCTION post_hot_score(trusted_marks integer, created timestamptz) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN log(greatest(trusted_marks, 1)::double precision) + extract(epoch FROM created)::double precision / 45000;

ALTER TABLE posts
    ADD COLUMN helpful_count integer NOT NULL DEFAULT 0,
    ADD COLUMN trusted_helpful_count integer NOT NULL DEFAULT 0,
    ADD COLUMN hot_score double precision GENERATED ALWAYS AS (post_hot_score(trusted_helpful_count, created_at)) STORED;

-- The counters follow the marks, in the statement that changes them. Every post row is updated under its row
-- lock, so concurrent marks on one post add up exactly.
CREATE FUNCTION helpful_marks_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE posts SET helpful_count = helpful_count + 1, trusted_helpful_count = trusted_helpful_count + NEW.counted::int
        WHERE id = NEW.post_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE posts SET helpful_count = helpful_count - 1, trusted_helpful_count = trusted_helpful_count - OLD.counted::int
        WHERE id = OLD.post_id;
    ELSIF NEW.counted IS DISTINCT FROM OLD.counted THEN
        UPDATE posts SET trusted_helpful_count = trusted_helpful_count + NEW.counted::int - OLD.counted::int
        WHERE id = NEW.post_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER helpful_marks_counted AFTER INSERT OR DELETE OR UPDATE OF counted ON helpful_marks
    FOR EACH ROW EXECUTE FUNCTION helpful_marks_counted();

-- An account's marks follow its state, whichever path changed it (a moderator's ban, an admin's, an unban, the
-- purger clearing an expired ban, registration, deletion): a ban stops them counting, lifting it counts them
-- again, registering makes them trusted, deletion deletes them. The posts they touch are locked in id order
-- first, so two such changes with marks on the same posts wait for each other instead of deadlocking.
CREATE FUNCTION helpful_marks_follow_account() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM posts WHERE id IN (SELECT post_id FROM helpful_marks WHERE account_id = NEW.id) ORDER BY id FOR NO KEY UPDATE;
    IF NEW.deleted_at IS NOT NULL THEN
        DELETE FROM helpful_marks WHERE account_id = NEW.id;
    ELSE
        UPDATE helpful_marks
        SET trusted = trusted OR NEW.kind = 'registered',
            counted = (trusted OR NEW.kind = 'registered') AND NOT NEW.banned
        WHERE account_id = NEW.id
          AND (trusted, counted) IS DISTINCT FROM (trusted OR NEW.kind = 'registered', (trusted OR NEW.kind = 'registered') AND NOT NEW.banned);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER helpful_marks_follow_account AFTER UPDATE OF banned, kind, deleted_at ON accounts
    FOR EACH ROW WHEN ((OLD.banned, OLD.kind, OLD.deleted_at) IS DISTINCT FROM (NEW.banned, NEW.kind, NEW.deleted_at))
    EXECUTE FUNCTION helpful_marks_follow_account();

-- Ranked lists (`sort=top|hot`) walk these in order, one per filter shape, as the `new` lists walk those of 0004,
-- 0012 and 0017: public posts for everyone, unlisted ones for moderators, an author's own unlisted ones for them.
CREATE INDEX posts_public_top_idx           ON posts (trusted_helpful_count DESC, id DESC)                           WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_weather_top_idx   ON posts (weather_type, trusted_helpful_count DESC, id DESC)             WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_category_top_idx  ON posts (category, trusted_helpful_count DESC, id DESC)                 WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_region_top_idx    ON posts (region_id, trusted_helpful_count DESC, id DESC)                WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_wc_top_idx        ON posts (weather_type, category, trusted_helpful_count DESC, id DESC)   WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_rw_top_idx        ON posts (region_id, weather_type, trusted_helpful_count DESC, id DESC)  WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_author_top_idx    ON posts (author_id, trusted_helpful_count DESC, id DESC)                WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_hot_idx           ON posts (hot_score DESC, id DESC)                                       WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_weather_hot_idx   ON posts (weather_type, hot_score DESC, id DESC)                         WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_category_hot_idx  ON posts (category, hot_score DESC, id DESC)                             WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_region_hot_idx    ON posts (region_id, hot_score DESC, id DESC)                            WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_wc_hot_idx        ON posts (weather_type, category, hot_score DESC, id DESC)               WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_rw_hot_idx        ON posts (region_id, weather_type, hot_score DESC, id DESC)              WHERE status = 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_public_author_hot_idx    ON posts (author_id, hot_score DESC, id DESC)                            WHERE status = 'visible' AND deleted_at IS NULL;

CREATE INDEX posts_unlisted_top_idx          ON posts (trusted_helpful_count DESC, id DESC)                          WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_weather_top_idx  ON posts (weather_type, trusted_helpful_count DESC, id DESC)            WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_category_top_idx ON posts (category, trusted_helpful_count DESC, id DESC)                WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_region_top_idx   ON posts (region_id, trusted_helpful_count DESC, id DESC)               WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_wc_top_idx       ON posts (weather_type, category, trusted_helpful_count DESC, id DESC)  WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_rw_top_idx       ON posts (region_id, weather_type, trusted_helpful_count DESC, id DESC) WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_author_top_idx   ON posts (author_id, trusted_helpful_count DESC, id DESC)               WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_hot_idx          ON posts (hot_score DESC, id DESC)                                      WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_weather_hot_idx  ON posts (weather_type, hot_score DESC, id DESC)                        WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_category_hot_idx ON posts (category, hot_score DESC, id DESC)                            WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_region_hot_idx   ON posts (region_id, hot_score DESC, id DESC)                           WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_wc_hot_idx       ON posts (weather_type, category, hot_score DESC, id DESC)              WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_rw_hot_idx       ON posts (region_id, weather_type, hot_score DESC, id DESC)             WHERE status <> 'visible' AND deleted_at IS NULL;
CREATE INDEX posts_unlisted_author_hot_idx   ON posts (author_id, hot_score DESC, id DESC)                           WHERE status <> 'visible' AND deleted_at IS NULL;

-- Timed bans that ran out, for the purger to clear (their accounts' marks then count again).
CREATE INDEX accounts_ban_expiry_idx ON accounts (banned_until) WHERE banned;
