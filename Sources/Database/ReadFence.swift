/// The read fence (CONTRACT §12, sql/0028): a write that takes something out of some reader's view (a moderator's
/// decision, an auto-hide, a deletion) holds at once on every instance and standby.
///
/// After the write's COMMIT, on the same connection, `publish` stores in the one row of `read_fence` the primary's WAL
/// insert position: COMMIT returns only once its commit record is inserted, so that position is at or past the end of
/// the commit record, whatever `synchronous_commit` says (the write position, `pg_current_wal_lsn()`, may still be short
/// of it when the commit was asynchronous). A standby that has replayed it has applied the commit. The row only grows.
///
/// Who honours it: the writing instance's router at once (`ReplicaRouter.raiseFence`); every instance's router reads the
/// row at each sample of the primary (every 100 ms) and sends no read to a standby unless its last sample of the primary
/// began within its `fenceHorizon` (300 ms). So a read that begins `fenceHorizon` after the row's commit, on any
/// instance, either is served by a standby that has replayed the write or goes to the primary. The writing instance
/// answers its client only after that horizon (`fencedTransaction`): once a client has its answer, no reader anywhere
/// sees the old state. Nothing of this needs the live board's listener or pump.
public enum ReadFence {
    /// Raises the stored fence past the commit just made on `connection` (outside a transaction); returns the fence.
    public static func publish(on connection: PostgresConnection) throws -> Int64 {
        try connection.query(
            "UPDATE read_fence SET lsn = greatest(lsn, (pg_current_wal_insert_lsn() - '0/0')::bigint) RETURNING lsn"
        )[0].decode(Int64.self, "lsn")
    }

    /// The stored fence (the replica monitor reads it with the primary's position).
    static let current = "coalesce((SELECT lsn FROM read_fence), 0)"
}

extension ReadFence {
    /// Handed to a transaction that may fence: it says so when it takes something out of a reader's view. Used on the
    /// one pool thread that runs the transaction.
    public final class Request: @unchecked Sendable {
        var needed = false

        public func fence() { needed = true }
    }
}

extension PostgresPool {
    /// Runs `body` in a transaction that takes something out of some reader's view, fenced (below).
    public func fencedTransaction<T: Sendable>(_ router: ReplicaRouter?, _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await fencedTransaction(router) { connection, request in
            request.fence()
            return try body(connection)
        }
    }

    /// Runs `body` in a transaction; when it asked for a fence (`Request.fence`), publishes the read fence past the
    /// commit on the same connection (`ReadFence`), raises `router`'s at once, and returns only after
    /// the router's `fenceHorizon`, by which every instance honours it. With no router (no standbys here) the fence is
    /// still published, for the instances that have some, and nothing waits.
    public func fencedTransaction<T: Sendable>(
        _ router: ReplicaRouter?, _ body: @escaping @Sendable (PostgresConnection, ReadFence.Request) throws -> T
    ) async throws -> T {
        let (result, fence) = try await withConnection { connection -> (T, Int64?) in
            let request = ReadFence.Request()
            let result = try connection.transaction { try body($0, request) }
            return (result, request.needed ? try ReadFence.publish(on: connection) : nil)
        }
        if let fence, let router {
            router.raiseFence(to: fence)
            try? await Task.sleep(for: router.fenceHorizon)
        }
        return result
    }
}
