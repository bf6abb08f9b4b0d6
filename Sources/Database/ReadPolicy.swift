/// Where a read may be served (CONTRACT §12), named at every call site: `ReplicaRouter.read(_:_:)` follows it.
///
/// A standby serves a read only when it is up, no more than `DATABASE_MAX_REPLICA_LAG_MS` behind, and has replayed the
/// read fence (`ReadFence`); otherwise, and for `.primary`, the primary does.
public enum ReadPolicy: Sendable, Hashable {
    /// The primary only: a read that must see everything committed (a moderator's, a write's own check).
    case primary
    /// Any standby fresh enough: a reader with no writes of its own to see.
    case anyStandby
    /// A standby that has replayed WAL position `after` (bytes, `pg_current_wal_lsn() - '0/0'`): a reader's own last
    /// write, which it must read back (read-your-writes).
    case standby(after: Int64)
}
