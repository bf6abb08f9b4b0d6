-- POST /v1/accounts (rate limits off): the route's transaction.
\set n random(1, 1000000000)
BEGIN;
INSERT INTO accounts AS a (kind, display_name) VALUES ('anonymous', '익명-bnch') RETURNING id \gset
INSERT INTO sessions (account_id, token_hash, token_prefix) VALUES (:id, encode(sha256(convert_to(:id || '-' || :n || '-' || random(), 'UTF8')), 'hex'), 'wb_x');
COMMIT;
