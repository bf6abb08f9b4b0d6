@testable import Database
import Foundation
import Testing

/// Statements that queue while the pool's connections are busy go to PostgreSQL as one pipeline. Each test
/// parks the pool's only connection on a held advisory lock, queues statements behind it, then lets go.
@Suite("PostgreSQL pipelines")
struct PostgresPipelineTests {
    @Test("queued statements share one pipeline; each gets its own answer, an error stays with its statement, a write commits")
    func answersAndErrorsStayApart() async throws {
        let pool = TestDatabase.pool(size: 1)
        let other = TestDatabase.pool(size: 1)
        defer {
            pool.shutdown()
            other.shutdown()
        }
        // A table of this test's own; its name is generated here, never input.
        let table = "pipeline_probe_\(UInt32.random(in: 0...UInt32.max))"
        try await pool.withConnection { try $0.simpleQuery("CREATE TABLE \(table) (n int8 NOT NULL)") }

        let parked = try await ParkedConnection.park(pool)
        defer { parked.close() }
        let before = pool.pipelineCounts
        let tasks = await parked.queue([
            "SELECT \(10) AS n",
            "SELECT \(1) / \(0) AS n",
            "INSERT INTO \(raw: table) (n) VALUES (\(42)) RETURNING n",
            "SELECT \(30) AS n",
        ]) { try $0[0].decode(Int.self, "n") }
        // A transaction is never part of a pipeline: the batch ends before it.
        let transaction = await parked.queue { try await pool.transaction { try $0.query("SELECT \(50) AS n")[0].decode(Int.self, "n") } }
        let last = await parked.queue(["SELECT \(60) AS n"]) { try $0[0].decode(Int.self, "n") }[0]
        try await parked.release()
        #expect(try await tasks[0].value == 10)
        let division = await #expect(throws: PostgresError.self) { try await tasks[1].value }
        #expect(division?.sqlState == "22012")
        #expect(try await tasks[2].value == 42)
        #expect(try await tasks[3].value == 30)
        #expect(try await transaction.value == 50)
        #expect(try await last.value == 60)
        // The insert was committed on its own, although a statement before it failed.
        #expect(try await other.query("SELECT count(*) AS n FROM \(raw: table) WHERE n = 42")[0].decode(Int.self, "n") == 1)

        let after = pool.pipelineCounts
        #expect(after.pipelines - before.pipelines == 1)
        #expect(after.statements - before.statements == 4)
        try await other.withConnection { try $0.simpleQuery("DROP TABLE \(table)") }
    }

    @Test("a statement that times out in a pipeline fails alone; the ones after it still run")
    func timeoutStaysWithItsStatement() async throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        let parked = try await ParkedConnection.park(pool)
        defer { parked.close() }
        // Each statement is its own transaction, so the session-wide setting made by the first one holds for
        // the sleep and is put back by the third.
        let tasks = await parked.queue([
            "SELECT set_config('statement_timeout', '150', false) AS s",
            "SELECT pg_sleep(30)::text AS s",
            "SELECT set_config('statement_timeout', '5000', false) AS s",
            "SELECT 'after' AS s",
        ]) { try $0[0].decode(String.self, "s") }
        try await parked.release()
        #expect(try await tasks[0].value == "150ms")
        let timeout = await #expect(throws: PostgresError.self) { try await tasks[1].value }
        #expect(timeout?.isStatementTimeout == true)
        #expect(try await tasks[2].value == "5s")
        #expect(try await tasks[3].value == "after")
    }

    @Test("a connection that dies in the middle of a pipeline fails the rest as unavailable, and the pool heals")
    func connectionLostMidPipeline() async throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        let parked = try await ParkedConnection.park(pool)
        defer { parked.close() }
        let tasks = await parked.queue([
            "SELECT \(1) AS n",
            "SELECT CASE WHEN pg_terminate_backend(pg_backend_pid()) THEN \(2) END AS n",
            "SELECT \(3) AS n",
            "SELECT \(4) AS n",
        ]) { try $0[0].decode(Int.self, "n") }
        try await parked.release()
        #expect(try await tasks[0].value == 1)
        for task in tasks.dropFirst() {
            do {
                _ = try await task.value
            } catch let error as PostgresError {
                #expect(error.isUnavailable, "\(error)")
            }
        }
        let last = await #expect(throws: PostgresError.self) { try await tasks[3].value }
        #expect(last?.isUnavailable == true)
        // The worker replaced its connection.
        #expect(try await pool.query("SELECT \(5) AS n")[0].decode(Int.self, "n") == 5)
    }

    @Test("while the working connections are stuck, a standby connection serves the queue")
    func standbyStepsIn() async throws {
        let pool = TestDatabase.pool(size: 2, activeConnections: 1)
        defer { pool.shutdown() }
        let parked = try await ParkedConnection.park(pool)
        defer { parked.close() }
        // Answered while the lock is still held, so by the second connection.
        #expect(try await pool.query("SELECT \(7) AS n")[0].decode(Int.self, "n") == 7)
        try await parked.release()
    }
}

/// A pool's working connection parked on a held advisory lock, and the jobs queued behind it in order.
struct ParkedConnection {
    let pool: PostgresPool
    let lock: HeldAdvisoryLock
    let parked: Task<PostgresRows, any Error>

    static func park(_ pool: PostgresPool) async throws -> ParkedConnection {
        let lock = try await HeldAdvisoryLock.acquire()
        let parked = await occupy(pool) { [key = lock.key] in try $0.query("SELECT pg_advisory_lock(\(key))") }
        return ParkedConnection(pool: pool, lock: lock, parked: parked)
    }

    /// Starts `work` and returns once the pool has accepted its job, so jobs queue in the order given (the job
    /// may already have been taken by a standby connection: either way it is in the pool's hands).
    func queue<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async -> Task<T, any Error> {
        let before = pool.queue.observation.accepted
        let task = Task { try await work() }
        let accepted = await pool.reached { $0.accepted > before }
        #expect(accepted, "the pool never accepted the job")
        return task
    }

    /// Queues each statement as a single `query`, in order; `decode` turns its rows into the answer.
    func queue<T: Sendable>(
        _ statements: [SQLQuery],
        decode: @escaping @Sendable (PostgresRows) throws -> T
    ) async -> [Task<T, any Error>] {
        var tasks: [Task<T, any Error>] = []
        for statement in statements {
            tasks.append(await queue { [pool] in try decode(try await pool.query(statement)) })
        }
        return tasks
    }

    /// Lets the parked statement finish (its connection may have died with it; that is the caller's test).
    func release() async throws {
        try await lock.release()
        _ = try? await parked.value
    }

    func close() {
        lock.close()
    }
}
