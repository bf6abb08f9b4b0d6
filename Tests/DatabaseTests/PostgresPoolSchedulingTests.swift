@testable import Database
import Foundation
import Testing

/// Cancellation, deadlines without polling, and the pool's threads (issue #14).
@Suite("PostgreSQL pool scheduling")
struct PostgresPoolSchedulingTests {
    @Test("a queued job whose task is cancelled fails at once and never runs")
    func queuedJobCancelled() async throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        let table = "cancel_probe_\(UInt32.random(in: 0...UInt32.max))"
        try await pool.withConnection { try $0.simpleQuery("CREATE TABLE \(table) (n int8 NOT NULL)") }
        let parked = try await ParkedConnection.park(pool)
        defer { parked.close() }
        let insert = await parked.queue { try await pool.execute("INSERT INTO \(raw: table) (n) VALUES (\(1))") }
        insert.cancel()
        await #expect(throws: CancellationError.self) { try await insert.value }
        // It left the queue when it was cancelled, not when a connection came free.
        #expect(pool.usage.waiting == 0)
        try await parked.release()
        // The only connection is free again and has run everything it was given: the insert was not among it.
        #expect(try await pool.query("SELECT count(*) AS n FROM \(raw: table)")[0].decode(Int.self, "n") == 0)
        try await pool.withConnection { try $0.simpleQuery("DROP TABLE \(table)") }
    }

    @Test("a running statement whose task is cancelled is cancelled on the server; the connection serves the next query")
    func runningStatementCancelled() async throws {
        let pool = TestDatabase.pool(size: 1, statementTimeoutMilliseconds: 60_000)
        let observer = TestDatabase.pool(size: 1)
        defer {
            pool.shutdown()
            observer.shutdown()
        }
        let pid = try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid")
        let signal = try await StartSignal.arm(pool, observer: observer)
        let sleeper = Task { try await pool.query("SELECT pg_advisory_unlock(\(signal.key)), pg_sleep(30)") }
        try await signal.started()
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        // Cancelled on the server: its backend no longer runs the 30 s sleep.
        let state = try await observer.query("SELECT state FROM pg_stat_activity WHERE pid = \(pid)")[0].decode(String.self, "state")
        #expect(state != "active")
        // Same connection, same session, still usable; the cancel is not counted as a statement timeout.
        #expect(try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid") == pid)
        #expect(pool.errorCounts["statement_timeout"] == nil)
        #expect(await pool.reached { $0.inUse == 0 })
    }

    @Test("a cancelled transaction is interrupted on the server and rolled back; its later statements never run")
    func runningTransactionCancelled() async throws {
        let pool = TestDatabase.pool(size: 1, statementTimeoutMilliseconds: 60_000)
        let observer = TestDatabase.pool(size: 1)
        defer {
            pool.shutdown()
            observer.shutdown()
        }
        let table = "cancel_tx_\(UInt32.random(in: 0...UInt32.max))"
        try await pool.withConnection { try $0.simpleQuery("CREATE TABLE \(table) (n int8 NOT NULL)") }
        let pid = try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid")
        let signal = try await StartSignal.arm(pool, observer: observer)
        let transaction = Task {
            try await pool.transaction { connection in
                try connection.execute("INSERT INTO \(raw: table) (n) VALUES (\(1))")
                // The cancellation interrupts this; were the error swallowed, the next insert would fail at once.
                _ = try? connection.query("SELECT pg_advisory_unlock(\(signal.key)), pg_sleep(30)")
                try connection.execute("INSERT INTO \(raw: table) (n) VALUES (\(2))")
            }
        }
        try await signal.started()
        transaction.cancel()
        await #expect(throws: CancellationError.self) { try await transaction.value }
        #expect(try await observer.query("SELECT count(*) AS n FROM \(raw: table)")[0].decode(Int.self, "n") == 0)
        #expect(try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid") == pid)
        try await pool.withConnection { try $0.simpleQuery("DROP TABLE \(table)") }
    }

    @Test("cancelling a queued statement drops it from the pipeline; the others get their own answers")
    func queuedStatementLeavesPipeline() async throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        let parked = try await ParkedConnection.park(pool)
        defer { parked.close() }
        let before = pool.pipelineCounts
        let tasks = await parked.queue(["SELECT \(1) AS n", "SELECT \(2) AS n", "SELECT \(3) AS n"]) { try $0[0].decode(Int.self, "n") }
        tasks[1].cancel()
        await #expect(throws: CancellationError.self) { try await tasks[1].value }
        try await parked.release()
        #expect(try await tasks[0].value == 1)
        #expect(try await tasks[2].value == 3)
        let after = pool.pipelineCounts
        #expect(after.pipelines - before.pipelines == 1)
        #expect(after.statements - before.statements == 2)
    }

    @Test("cancelling a statement already sent in a pipeline answers its caller at once and leaves the others alone")
    func sentStatementCancelledInPipeline() async throws {
        let pool = TestDatabase.pool(size: 1)
        let observer = TestDatabase.pool(size: 1)
        defer {
            pool.shutdown()
            observer.shutdown()
        }
        let pid = try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid")
        let second = try await HeldAdvisoryLock.acquire()
        defer { second.close() }
        let signal = try await StartSignal.arm(pool, observer: observer)
        let parked = try await ParkedConnection.park(pool)
        defer { parked.close() }
        let tasks = await parked.queue([
            "SELECT CASE WHEN pg_advisory_unlock(\(signal.key)) THEN pg_advisory_xact_lock(\(second.key))::text END AS s",
            "SELECT 'second' AS s",
            "SELECT 'third' AS s",
        ]) { try $0[0].decode(String.self, "s") }
        try await parked.release()
        // The whole batch has been sent; its first statement has started, and waits for the second lock.
        try await signal.started()
        tasks[1].cancel()
        await #expect(throws: CancellationError.self) { try await tasks[1].value }
        try await second.release()
        #expect(try await tasks[0].value == "")
        #expect(try await tasks[2].value == "third")
        #expect(try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid") == pid)
    }

    @Test("an idle pool's threads are all blocked in waits without a timeout: nothing wakes them")
    func idlePoolSleeps() async throws {
        // A job queued before any worker had connected set the timer for its acquire deadline; the timer wakes
        // once at that (now stale) moment and then parks for good. A short acquire timeout keeps that moment
        // inside the wait below.
        let pool = TestDatabase.pool(size: 3, acquireTimeoutMilliseconds: 1000, activeConnections: 2)
        defer { pool.shutdown() }
        #expect(try await pool.query("SELECT \(1) AS n")[0].decode(Int.self, "n") == 1)
        // Three workers, the timer and the cancel thread.
        #expect(await pool.reached { $0.atRest && $0.threadsStarted == 5 })
        let atRest = pool.queue.rest
        // The thread that made the pool rest may still be on its way into the kernel: each thread's state is read
        // until it waits (bounded), and what it waits in says whether anything could wake it.
        for id in atRest.threadIDs {
            #expect(await Self.untimedWait(id), "thread \(id) is not in a futex wait without a timeout: \(Self.syscall(id) ?? "unreadable")")
            #expect(Self.threadState(id) == "S", "thread \(id)")
        }
        let later = pool.queue.rest
        #expect(later.atRest)
        #expect(later.wakeCount == atRest.wakeCount)
    }

    @Test("acquire timeouts fire while every connection is busy, with no thread waking before they are due")
    func acquireTimeoutFromTimer() async throws {
        let pool = TestDatabase.pool(size: 1, acquireTimeoutMilliseconds: 200)
        defer { pool.shutdown() }
        let parked = try await ParkedConnection.park(pool)
        defer { parked.close() }
        let wakes = pool.queue.rest.wakeCount
        let error = try await #require(throws: PostgresError.self) { try await pool.query("SELECT 1") }
        #expect(error.kind == .poolTimeout)
        // The timer woke for the deadline (once, or twice if it was on its way for the parked job's) — it did
        // not tick through the 200 ms.
        #expect(pool.queue.rest.wakeCount - wakes <= 2)
        #expect(pool.errorCounts["pool_timeout"] == 1)
        try await parked.release()
    }

    @Test("shutdown fails queued jobs, lets the running one finish, and ends every pool thread")
    func shutdownEndsThreads() async throws {
        let pool = TestDatabase.pool(size: 1)
        #expect(await pool.reached { $0.threadsStarted == 3 })
        let ids = pool.queue.rest.threadIDs
        #expect(Set(ids.compactMap(Self.threadName)) == ["db-0", "db-timer", "db-cancel"])
        let parked = try await ParkedConnection.park(pool)
        defer { parked.close() }
        let queued = await parked.queue { try await pool.query("SELECT 1") }
        // Shutdown blocks until the running job ends: call it off the test's task, and release the job once
        // the queue is closed (the queued job failing says it is).
        let shutdown = Task.detached { pool.shutdown() }
        let error = await #expect(throws: PostgresError.self) { try await queued.value }
        #expect(error?.kind == .shutdown)
        try await parked.release()
        await #expect(throws: Never.self) { _ = try await parked.parked.value }
        await shutdown.value
        // Shutdown joined them: each has left its loop (its last step) and returned.
        #expect(pool.queue.observation.threadsEnded == ids.count)
        let later = await #expect(throws: PostgresError.self) { try await pool.query("SELECT 1") }
        #expect(later?.kind == .shutdown)
    }

    @Test("a pool released without shutdown ends its threads too")
    func releasedPoolEndsThreads() async throws {
        let queue: JobQueue
        do {
            let pool = TestDatabase.pool(size: 2)
            #expect(try await pool.query("SELECT \(1) AS n")[0].decode(Int.self, "n") == 1)
            #expect(await pool.reached { $0.threadsStarted == 4 })
            queue = pool.queue
        }
        // Two workers, the timer and the cancel thread each leave their loop (their last step).
        #expect(await queue.reached { $0.threadsEnded == 4 })
    }

    // MARK: Helpers

    private static func threadName(_ id: Int) -> String? {
        (try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The thread's state letter from `/proc/self/task/<id>/stat` (`S`: sleeping).
    private static func threadState(_ id: Int) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/self/task/\(id)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ").first.map(String.init)
    }

    /// The thread's current system call and its arguments (`/proc/self/task/<id>/syscall`).
    private static func syscall(_ id: Int) -> String? {
        try? String(contentsOfFile: "/proc/self/task/\(id)/syscall", encoding: .utf8)
    }

    /// True once the thread is blocked in `futex` with a NULL timeout (what `DispatchSemaphore.wait()` without a
    /// deadline does): only another thread's post can wake it. Read again every millisecond for up to 5 s.
    private static func untimedWait(_ id: Int) async -> Bool {
        #if arch(x86_64)
        let futex = "202"
        #else
        let futex = "98"
        #endif
        for _ in 0..<5000 {
            // Fields: number, uaddr, op, val, timeout, …
            if let fields = syscall(id)?.split(separator: " "), fields.count > 4, fields[0] == futex, fields[4] == "0x0" { return true }
            try? await Task.sleep(for: .milliseconds(1))  // the poll's interval: the state is read, not waited out
        }
        return false
    }
}
