@testable import Database
import Foundation
import Testing

/// The throwaway database that `deploy/dev test` creates for this run.
enum TestDatabase {
    static var url: String {
        guard let url = ProcessInfo.processInfo.environment["WEATHERBOARD_TEST_DATABASE_URL"], !url.isEmpty else {
            Issue.record("WEATHERBOARD_TEST_DATABASE_URL is not set: run the tests with `deploy/dev test`")
            return "postgresql://invalid@127.0.0.1:1/none"
        }
        return url
    }

    static func pool(
        size: Int = 4,
        statementTimeoutMilliseconds: Int = 60_000,
        acquireTimeoutMilliseconds: Int? = nil,
        activeConnections: Int? = nil,
        maxWaitingJobs: Int = 1000,
        url: String = TestDatabase.url
    ) -> PostgresPool {
        PostgresPool(
            configuration: PostgresConfiguration(
                conninfo: url,
                poolSize: size,
                statementTimeoutMilliseconds: statementTimeoutMilliseconds,
                acquireTimeoutMilliseconds: acquireTimeoutMilliseconds,
                activeConnections: activeConnections,
                maxWaitingJobs: maxWaitingJobs
            )
        )
    }

    /// A fresh, empty database for tests that need their own schema; dropped by the caller.
    static func withScratchDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
        let admin = pool(size: 1)
        defer { admin.shutdown() }
        let name = "wb_scratch_\(UInt32.random(in: 0...UInt32.max))"
        // CREATE DATABASE cannot take bind parameters; the name is generated above, never input.
        try await admin.withConnection { try $0.simpleQuery("CREATE DATABASE \(name)") }
        do {
            let value = try await body(replacingDatabase(in: url, with: name))
            try await admin.withConnection { try $0.simpleQuery("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
            return value
        } catch {
            try? await admin.withConnection { try $0.simpleQuery("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
            throw error
        }
    }

    static func replacingDatabase(in url: String, with name: String) -> String {
        guard let slash = url.lastIndex(of: "/") else { return url }
        return String(url[...slash]) + name
    }
}

/// A session advisory lock held on a connection of its own, so a test can park pool connections on it
/// (`SELECT pg_advisory_lock(key)` from the pool waits until `release`).
struct HeldAdvisoryLock {
    let key = Int.random(in: 1...1_000_000)
    private let holder = TestDatabase.pool(size: 1)

    static func acquire() async throws -> HeldAdvisoryLock {
        let lock = HeldAdvisoryLock()
        try await lock.holder.withConnection { [key = lock.key] in _ = try $0.query("SELECT pg_advisory_lock(\(key))") }
        return lock
    }

    func release() async throws {
        try await holder.withConnection { [key] in _ = try $0.query("SELECT pg_advisory_unlock(\(key))") }
    }

    /// Closes the holding connection (which also drops the lock if `release` was never reached).
    func close() {
        holder.shutdown()
    }
}

/// Tells a test when a statement has started on the server, without polling: the pool's only connection holds
/// a session lock, the statement under test releases it first (`SELECT pg_advisory_unlock(key), …`), and
/// `started()` returns once another session could take that lock.
struct StartSignal {
    let key = Int.random(in: 1_000_001...2_000_000)
    /// A connection of its own to the same database (advisory locks are per database).
    let observer: PostgresPool

    /// Takes the lock on `pool`'s connection; `pool` must have one connection, the one that runs the statement.
    static func arm(_ pool: PostgresPool, observer: PostgresPool) async throws -> StartSignal {
        let signal = StartSignal(observer: observer)
        _ = try await pool.query("SELECT pg_advisory_lock(\(signal.key))")
        return signal
    }

    /// Returns once the statement that releases the lock has started.
    func started() async throws {
        try await observer.withConnection { [key] connection in
            _ = try connection.query("SELECT pg_advisory_lock(\(key))")
            _ = try connection.query("SELECT pg_advisory_unlock(\(key))")
        }
    }
}

/// Runs `body` on one of the pool's connections and returns once it has started there (the connection is
/// then busy), with the task that waits for it to end.
func occupy<T: Sendable>(
    _ pool: PostgresPool,
    _ body: @escaping @Sendable (PostgresConnection) throws -> T
) async -> Task<T, any Error> {
    let (started, signal) = AsyncStream<Void>.makeStream()
    let task = Task {
        try await pool.withConnection { connection in
            signal.yield()
            signal.finish()
            return try body(connection)
        }
    }
    var iterator = started.makeAsyncIterator()
    _ = await iterator.next()
    return task
}

extension PostgresPool {
    /// Waits until `condition` holds of the pool's queue, up to 30 s (bounded: a test may fail, never hang);
    /// false when it never did.
    func reached(_ condition: @escaping @Sendable (JobQueue.Observation) -> Bool) async -> Bool {
        await queue.reached(condition)
    }
}

extension JobQueue {
    func reached(_ condition: @escaping @Sendable (JobQueue.Observation) -> Bool) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.waitUntil(condition) }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
