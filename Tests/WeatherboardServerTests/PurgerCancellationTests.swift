import Board
import Database
import Foundation
import Testing

@Suite("Purger cancellation")
struct PurgerCancellationTests {
    @Test("a pass cancelled while it holds the purger's lock releases it at once: another instance takes it")
    func cancelledPassReleasesLock() async throws {
        try await TestDatabase.migrated.value
        // The pass's own pool: one connection, no statement timeout to end its wait before the cancellation does.
        let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: TestDatabase.url, poolSize: 1, statementTimeoutMilliseconds: 120_000))
        let other = TestDatabase.pool(size: 1)
        defer {
            pool.shutdown()
            other.shutdown()
        }
        // A key older than anything another test plants, and a policy that purges only keys that old, so no other
        // test's pass and no other kind of row is touched.
        let scope = "purge-cancel-\(UUID().uuidString)"
        try await other.execute(
            "INSERT INTO idempotency_keys (scope, key, request_hash, created_at) VALUES (\(scope), 'old', 'x', now() - interval '1000001 hours')"
        )
        var policy = Purger.Policy(evidenceDays: 100_000)
        policy.idempotencyHours = 1_000_000
        policy.revokedSessionHours = 1_000_000
        policy.lockKey = Int64.random(in: 1...Int64.max)
        // The pass takes its lock, then waits on the key's row, which a transaction holds.
        let hold = try await GatedTransaction.start(["SELECT key FROM idempotency_keys WHERE scope = \(scope) FOR UPDATE"], on: other)
        let purger = Purger(database: pool, policy: policy)
        let lockKey = policy.lockKey
        let pass = Task { try await purger.runOnce() }
        #expect(try await waitForLockWaiter("DELETE FROM idempotency_keys WHERE (scope, key) IN (%", behind: hold))
        pass.cancel()
        await #expect(throws: CancellationError.self) { try await pass.value }
        let locked = try await other.withConnection { connection in
            let locked = try connection.query("SELECT pg_try_advisory_lock(\(lockKey)) AS locked")[0].decode(Bool.self, "locked")
            if locked { _ = try connection.query("SELECT pg_advisory_unlock(\(lockKey))") }
            return locked
        }
        #expect(locked, "the cancelled pass left its lock on a pooled connection")
        try await hold.open()
        try await other.execute("DELETE FROM idempotency_keys WHERE scope = \(scope)")
    }
}
