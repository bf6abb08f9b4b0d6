-- The media sync's claim on a due row while it moves the row's files (MediaRecords.claimForSync): until then no
-- other sync, on this instance or another, takes the row. Deletions only mark rows (retired, sync_due); the
-- sync makes their files private and the purger deletes them.
ALTER TABLE media ADD COLUMN sync_claimed_until timestamptz;
