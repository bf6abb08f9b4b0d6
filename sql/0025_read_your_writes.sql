-- Past one machine (CONTRACT §12): reads may be served by streaming-replication standbys, and a client must read its
-- own writes at once, on any instance. After each write request of an account the server stores here the primary's
-- WAL position (a byte offset, `pg_current_wal_lsn() - '0/0'`); the account's later reads go to a standby only once
-- its replay position has passed it. The token check reads it with the account, on the primary, for free.
-- Adding a column with a constant default does not rewrite the table.
ALTER TABLE accounts ADD COLUMN write_lsn bigint NOT NULL DEFAULT 0;
