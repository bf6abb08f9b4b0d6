-- Past one machine (CONTRACT §12): the read fence. A write that takes something out of some reader's view (a
-- moderator's decision, an auto-hide, a deletion) stores here, after its commit, a WAL position at or past its commit
-- record (`ReadFence`). Every instance's replica monitor reads the row every 100 ms and sends no read to a standby
-- that has not replayed it, so the change holds on every instance and standby, not only on the one that wrote it.
-- One row; the stored value only grows.
CREATE TABLE read_fence (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    lsn bigint NOT NULL DEFAULT 0
);
INSERT INTO read_fence DEFAULT VALUES;
