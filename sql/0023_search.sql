-- Search (CONTRACT §10, Sources/Board/PostgresPostStore+Search.swift): every term of `q` is a substring of a post's
-- title, body or image alt text, after the term filter's folding (NFKC, case folding, default-ignorables removed).
--
-- The folding is the server's (TermFilter.normalize), so the server writes the folded text here, in the transaction
-- that writes the post: `text_doc` is the folded title and body, one line each. `alt_doc` is the folded alt text of
-- the post's images, one line each, kept by the trigger below from `media.alt_search` (also written by the server).
--
-- The index is GIN over each document's keys (`search_keys`): every character, every pair of adjacent characters
-- (Lucene's CJK bigrams, for every script: a two-syllable Korean word is one key, `파전` inside `김치파전에` too), and
-- nine block tokens that name the id range a post is in (1,024 posts, then ×4 up to 64M). A search looks for a
-- term's pairs (or its character, for a one-character term), then checks the term itself with `strpos` on the few
-- candidates; the block tokens let it walk newest first, a window at a time, instead of reading every match
-- (bench/README.md, search: the measured choice between this, pg_trgm and RUM). No extension is needed.
CREATE TABLE post_search (
    post_id  bigint PRIMARY KEY REFERENCES posts (id) ON DELETE CASCADE,
    text_doc text NOT NULL,
    alt_doc  text NOT NULL DEFAULT ''
);

ALTER TABLE media ADD COLUMN alt_search text;

-- The token of block `block` of `level` (blocks of 1,024 × 4^level ids).
CREATE FUNCTION search_block(level integer, block bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ SELECT -((level::bigint << 40) | block) - 1 $$;

-- A document's keys. A pair is two code points (21 bits each) in one bigint, a character its code point; pairs and
-- characters with a space or a line break are left out (a term never holds one). A block token is negative:
-- -(level << 40 | id >> (10 + 2 * level)) - 1. `string_to_array(doc, NULL)` splits into characters in one pass
-- (indexing an array of text by position is quadratic: 1.5 ms a post, against 40 µs).
CREATE FUNCTION search_keys(doc text, post_id bigint) RETURNS bigint[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT array(
        SELECT ascii(c)::bigint FROM unnest(string_to_array(doc, NULL)) AS c WHERE c NOT IN (' ', E'\n')
        UNION ALL
        SELECT (ascii(c)::bigint << 21) | ascii(n)
        FROM unnest(string_to_array(doc, NULL), string_to_array(substr(doc, 2), NULL)) AS pair (c, n)
        WHERE n IS NOT NULL AND c NOT IN (' ', E'\n') AND n NOT IN (' ', E'\n')
        UNION ALL
        SELECT search_block(level, post_id >> (10 + 2 * level)) FROM generate_series(0, 8) AS level
    )
$$;

-- fastupdate off: a pending list is read in full by every search (4 MB by default); each insert pays its keys now.
CREATE INDEX post_search_keys_idx ON post_search USING gin (search_keys(text_doc || E'\n' || alt_doc, post_id)) WITH (fastupdate = off);

-- A post's alt document follows its images: attached, detached, re-ordered, their alt text changed.
CREATE FUNCTION post_search_alts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    affected bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        affected := ARRAY[NEW.post_id];
    ELSIF TG_OP = 'DELETE' THEN
        affected := ARRAY[OLD.post_id];
    ELSE
        affected := ARRAY[OLD.post_id, NEW.post_id];
    END IF;
    UPDATE post_search s SET alt_doc = coalesce(
        (SELECT string_agg(m.alt_search, E'\n' ORDER BY m.position) FROM media m WHERE m.post_id = s.post_id AND m.alt_search IS NOT NULL), '')
    WHERE s.post_id = ANY (affected);
    RETURN NULL;
END $$;
CREATE TRIGGER media_post_search_insert_delete AFTER INSERT OR DELETE ON media
    FOR EACH ROW EXECUTE FUNCTION post_search_alts();
CREATE TRIGGER media_post_search_update AFTER UPDATE OF post_id, position, alt_search ON media
    FOR EACH ROW WHEN (OLD.post_id IS DISTINCT FROM NEW.post_id OR OLD.position IS DISTINCT FROM NEW.position
                       OR OLD.alt_search IS DISTINCT FROM NEW.alt_search)
    EXECUTE FUNCTION post_search_alts();

-- Writers that do not index (a binary older than this file, during a rolling upgrade; any hand-made UPDATE) leave no
-- stale document behind: a post whose title or body changes loses its document until the writer (or the next
-- `weatherboard migrate`, which indexes every post without one) writes it again. The server writes it in the
-- statement's own transaction, right after.
CREATE FUNCTION post_search_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM post_search WHERE post_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER posts_search_text AFTER UPDATE OF title, body ON posts
    FOR EACH ROW WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.body IS DISTINCT FROM NEW.body)
    EXECUTE FUNCTION post_search_forget();
