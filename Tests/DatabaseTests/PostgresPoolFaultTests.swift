@testable import Database
import Foundation
import Testing

/// What the pool does when the server misbehaves (issue #19): a cancel port that never answers, a ROLLBACK that
/// fails, and a queue that is full.
@Suite("PostgreSQL pool faults")
struct PostgresPoolFaultTests {
    @Test("a cancel the server never answers does not hold the cancelling task; the connection it was for is replaced")
    func stalledCancel() async throws {
        let proxy = try FaultProxy()
        defer { proxy.close() }
        let pool = PostgresPool(
            configuration: PostgresConfiguration(conninfo: proxy.url, poolSize: 1, statementTimeoutMilliseconds: 60_000, connectTimeoutSeconds: 2)
        )
        let observer = TestDatabase.pool(size: 1)
        defer {
            pool.shutdown()
            observer.shutdown()
        }
        let pid = try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid")
        let signal = try await StartSignal.arm(pool, observer: observer)
        let sleeper = Task { try await pool.query("SELECT pg_advisory_unlock(\(signal.key)), pg_sleep(60)") }
        try await signal.started()

        // Cancel from a thread of its own and hear when `cancel()` returns; the proxy holds the cancel request
        // until the test ends, so a `cancel()` that waits for the server never returns in time.
        let (returned, done) = AsyncStream<Void>.makeStream()
        Thread.detachNewThread {
            sleeper.cancel()
            done.yield()
        }
        let cancelReturned = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var iterator = returned.makeAsyncIterator()
                return await iterator.next() != nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(20))  // bounded: a test may fail, never hang
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(cancelReturned, "Task.cancel() waited for the server's answer to the cancel request")
        #expect(await proxy.reached(.cancelHeld))
        // The cancel never reached the server, so the statement still runs: end it from outside.
        #expect(try await observer.query("SELECT pg_cancel_backend(\(pid)::int4) AS ok")[0].decode(Bool.self, "ok"))
        guard cancelReturned else {
            proxy.close()  // lets the stuck PQcancel return, so the pool can shut down
            return
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        // The worker gave up on the request after the connect timeout and closed that connection: a cancel
        // arriving late must not hit the next statement.
        #expect(try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid") != pid)
        #expect(await pool.reached { $0.inUse == 0 })
    }

    @Test("a connection whose ROLLBACK failed is closed and replaced, never handed to the next caller")
    func failedRollback() async throws {
        let proxy = try FaultProxy()
        defer { proxy.close() }
        let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: proxy.url, poolSize: 1))
        defer { pool.shutdown() }
        let pid = try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid")
        proxy.failNextRollback()
        // The job leaves its transaction open; the worker's ROLLBACK fails and the session stays in it.
        try await pool.withConnection { connection in
            try connection.simpleQuery("BEGIN")
            _ = try connection.query("SELECT \(1) AS one")
        }
        #expect(await proxy.reached(.rollbackFailed))
        // The next caller gets a fresh session, not the one still inside the transaction.
        #expect(try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid") != pid)
        // And the pool hung up on the broken one.
        #expect(await proxy.reached(.sessionClosed))
    }

    @Test("a backend killed inside a job's open transaction is replaced; the pool hands out a working connection")
    func backendKilledInTransaction() async throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        let url = TestDatabase.url
        let pid = try await pool.withConnection { connection in
            try connection.simpleQuery("BEGIN")
            let pid = try connection.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid")
            // Another session ends this one and waits until it is gone; the job returns with its transaction open.
            let killer = try PostgresConnection(conninfo: url, statementTimeoutMilliseconds: 30_000)
            defer { killer.close() }
            #expect(try killer.query("SELECT pg_terminate_backend(\(pid)::int4, 30000) AS ok")[0].decode(Bool.self, "ok"))
            return pid
        }
        #expect(try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid") != pid)
        #expect(try await pool.query("SELECT \(7) AS n")[0].decode(Int.self, "n") == 7)
    }

    @Test("past maxWaitingJobs a job fails at once as unavailable; cancelled queued jobs leave exactly their places")
    func boundedQueue() async throws {
        let pool = TestDatabase.pool(size: 1, maxWaitingJobs: 3)
        defer { pool.shutdown() }
        let parked = try await ParkedConnection.park(pool)
        defer { parked.close() }
        let tasks = await parked.queue(["SELECT \(1) AS n", "SELECT \(2) AS n", "SELECT \(3) AS n"]) { try $0[0].decode(Int.self, "n") }
        #expect(pool.usage.waiting == 3)
        // A generous acquire timeout: the refusal must come from the bound, not from waiting.
        let refused = try await #require(throws: PostgresError.self) { try await pool.query("SELECT 4", timeoutMilliseconds: 60_000) }
        #expect(refused.kind == .queueFull)
        #expect(refused.isUnavailable)
        #expect(pool.errorCounts["queue_full"] == 1)
        // Cancelling the middle job frees its place, and only its place.
        tasks[1].cancel()
        await #expect(throws: CancellationError.self) { try await tasks[1].value }
        #expect(pool.usage.waiting == 2)
        let late = await parked.queue(["SELECT \(5) AS n"]) { try $0[0].decode(Int.self, "n") }[0]
        #expect(pool.usage.waiting == 3)
        await #expect(throws: PostgresError.self) { try await pool.query("SELECT 6") }
        try await parked.release()
        #expect(try await tasks[0].value == 1)
        #expect(try await tasks[2].value == 3)
        #expect(try await late.value == 5)
        #expect(pool.usage.waiting == 0)
        #expect(pool.errorCounts["queue_full"] == 2)
    }

    @Test("many queued jobs cancelled out of order each leave the queue; the others get their own answers")
    func manyCancellations() async throws {
        let pool = TestDatabase.pool(size: 1, maxWaitingJobs: 400)
        defer { pool.shutdown() }
        let parked = try await ParkedConnection.park(pool)
        defer { parked.close() }
        var tasks: [Task<Int, any Error>] = []
        for i in 0..<300 {
            let task = Task { try await pool.query("SELECT \(i) AS n")[0].decode(Int.self, "n") }
            tasks.append(task)
        }
        #expect(await pool.reached { $0.waiting == 300 })
        let cancelled = Set((0..<300).filter { $0 % 3 != 0 }.shuffled())
        for index in cancelled { tasks[index].cancel() }
        for index in cancelled {
            await #expect(throws: CancellationError.self) { try await tasks[index].value }
        }
        #expect(pool.usage.waiting == 100)
        try await parked.release()
        for index in 0..<300 where !cancelled.contains(index) {
            #expect(try await tasks[index].value == index)
        }
        #expect(pool.usage.waiting == 0)
    }
}
