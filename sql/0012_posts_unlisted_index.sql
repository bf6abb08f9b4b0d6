-- A signed-in reader's lists merge the public posts with their own hidden and removed ones.
-- posts_author_idx holds every post of the author, so for a prolific author that branch read all of
-- their visible posts to find the few unlisted ones. This partial index holds only the unlisted ones.
CREATE INDEX posts_author_unlisted_idx ON posts (author_id, id DESC) WHERE status <> 'visible' AND deleted_at IS NULL;
