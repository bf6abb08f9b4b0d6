-- Images on posts (CONTRACT §8). The server keeps only what it made: a JPEG (long side ≤ 2048) and a
-- preview (≤ 640), stored under an unguessable key as `public/<key>.jpg` and `public/<key>-preview.jpg`
-- while the media may be shown, `private/…` while its post is hidden, removed or deleted.
CREATE TABLE media (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner_id            bigint NOT NULL REFERENCES accounts (id),
    -- The post it is on (at most one), and its place there (0–3, display order).
    post_id             bigint REFERENCES posts (id) ON DELETE SET NULL,
    position            smallint CHECK (position BETWEEN 0 AND 3),
    storage_key         text NOT NULL UNIQUE CHECK (storage_key ~ '^[a-z0-9]{26,64}$'),
    -- Where its files are now: public (served at MEDIA_PUBLIC_BASE_URL) or private (moderators only).
    public              boolean NOT NULL DEFAULT true,
    -- Set when its post's visibility may have changed; the sync moves the files and clears it.
    sync_due            boolean NOT NULL DEFAULT false,
    -- No longer its owner's to use (taken off a post, or its owner deleted the account) but kept, private,
    -- as evidence for a report; purged once no report's snapshot names it.
    retired             boolean NOT NULL DEFAULT false,
    width               integer NOT NULL CHECK (width BETWEEN 1 AND 2048),
    height              integer NOT NULL CHECK (height BETWEEN 1 AND 2048),
    byte_size           integer NOT NULL CHECK (byte_size > 0),
    preview_byte_size   integer NOT NULL CHECK (preview_byte_size > 0),
    blurhash            text NOT NULL CHECK (char_length(blurhash) BETWEEN 6 AND 100),
    alt                 text CHECK (char_length(alt) BETWEEN 1 AND 1500),
    created_at          timestamptz NOT NULL DEFAULT now(),
    CHECK ((post_id IS NULL) = (position IS NULL))
);
CREATE INDEX media_post_idx ON media (post_id, position) WHERE post_id IS NOT NULL;
CREATE INDEX media_owner_idx ON media (owner_id);
CREATE INDEX media_unattached_idx ON media (created_at) WHERE post_id IS NULL;
CREATE INDEX media_sync_idx ON media (id) WHERE sync_due;

-- A post's visibility decides its media's: any change of status or deletion marks them for the sync.
CREATE FUNCTION media_mark_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE media SET sync_due = true WHERE post_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER posts_media_visibility AFTER UPDATE OF status, deleted_at ON posts
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at)
    EXECUTE FUNCTION media_mark_sync();

-- A report keeps which media the post showed when it was reported (ids in display order), as evidence.
ALTER TABLE reports ADD COLUMN reported_media bigint[] NOT NULL DEFAULT '{}';
CREATE INDEX reports_media_idx ON reports USING gin (reported_media);
CREATE INDEX media_retired_idx ON media (id) WHERE retired;
