-- The second statement of a list whose posts have images (MediaRecords.ofPosts): the media of the page's posts,
-- by id. bench.py passes the ids the list returns as :ids ('{…}').
SELECT m.id, m.owner_id, m.post_id, m.storage_key, m.public, m.width, m.height, m.byte_size, m.blurhash, m.alt, m.created_at, m.retired
FROM media m WHERE m.post_id = ANY(:ids::int8[]) ORDER BY m.post_id, m.position;
