import DequeModule
import Foundation
import Logging

/// A bounded pool of libpq connections, each pinned to its own dedicated thread.
///
/// Callers never block Swift's cooperative pool: `withConnection` suspends the calling task, a pool thread
/// runs the closure (blocking in libpq there), and the task resumes with the result. When every connection
/// is busy, callers wait in a FIFO queue until `acquireTimeoutMilliseconds`, then fail with `.poolTimeout`.
///
/// Under load, single statements (`query`, `execute`) that queued behind busy connections go to PostgreSQL
/// several at a time as one pipeline, and only `activeConnections` connections work at once while the queue
/// keeps moving; the others stand by for slow statements and transactions (see `PostgresConfiguration`).
///
/// Broken connections are noticed (before each use, and after any failure) and replaced lazily, so the
/// pool heals by itself after PostgreSQL restarts. While the database is down, each worker retries at most
/// once per `reconnectBackoffMilliseconds` and fails the other jobs at once, so requests get a fast error.
public final class PostgresPool: Sendable {
    public let configuration: PostgresConfiguration
    private let queue: JobQueue
    private let workers: [Worker]
    private let errors = ErrorCounts()

    public init(configuration: PostgresConfiguration, logger: Logger = Logger(label: "weatherboard.db")) {
        self.configuration = configuration
        let queue = JobQueue(
            activeLimit: configuration.activeConnections,
            spareAfter: UInt64(configuration.spareAfterMilliseconds) * 1_000_000
        )
        self.queue = queue
        var workers: [Worker] = []
        for index in 0..<configuration.poolSize {
            let worker = Worker(index: index, configuration: configuration, queue: queue, logger: logger)
            workers.append(worker)
            worker.start()
        }
        self.workers = workers
        let watchdog = Thread {
            // Fails queued jobs whose acquire deadline passed while every connection stayed busy, and calls
            // a standby connection in when the queue has stopped moving.
            while queue.expireOverdue(now: DispatchTime.now().uptimeNanoseconds) {
                usleep(UInt32(min(20, configuration.spareAfterMilliseconds)) * 1000)
            }
        }
        watchdog.name = "db-watchdog"
        watchdog.start()
    }

    /// Runs `body` with a connection on a pool thread. The closure is synchronous and may run many statements.
    public func withConnection<T: Sendable>(
        timeoutMilliseconds: Int? = nil,
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        let timeout = UInt64(timeoutMilliseconds ?? configuration.acquireTimeoutMilliseconds) * 1_000_000
        return try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<T, any Error>) in
            let errors = self.errors
            let job = Job(deadline: DispatchTime.now().uptimeNanoseconds + timeout) { connection in
                let result = Result { try body(connection) }
                if case .failure(let error as PostgresError) = result { errors.record(error) }
                continuation.resume(with: result)
            } fail: { error in
                if let error = error as? PostgresError { errors.record(error) }
                continuation.resume(throwing: error)
            }
            queue.enqueue(job)
        }
    }

    /// Runs one statement and returns its rows.
    ///
    /// A single statement may share a pipeline with other single statements that queued while every
    /// connection was busy (see `PostgresConnection.pipeline`). `timeoutMilliseconds` bounds the wait for
    /// a connection; once sent, the statement runs under the session's statement timeout.
    public func query(_ query: SQLQuery, timeoutMilliseconds: Int? = nil) async throws -> PostgresRows {
        let timeout = UInt64(timeoutMilliseconds ?? configuration.acquireTimeoutMilliseconds) * 1_000_000
        return try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<PostgresRows, any Error>) in
            let errors = self.errors
            let statement = Job.Statement(query: query) { result in
                if case .failure(let error as PostgresError) = result { errors.record(error) }
                continuation.resume(with: result)
            }
            queue.enqueue(Job(deadline: DispatchTime.now().uptimeNanoseconds + timeout, statement: statement))
        }
    }

    /// Runs one statement and returns the number of rows it changed.
    @discardableResult
    public func execute(_ query: SQLQuery) async throws -> Int {
        try await self.query(query).affectedRows
    }

    /// Runs `body` in a transaction on one connection: COMMIT when it returns, ROLLBACK when it throws.
    @discardableResult
    public func transaction<T: Sendable>(
        isolation: PostgresConnection.IsolationLevel = .readCommitted,
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        try await withConnection { try $0.transaction(isolation: isolation, body) }
    }

    /// Failed statements and connection problems since start, by kind (`connection`, `pool_timeout`,
    /// `statement_timeout`, `server`, `decoding`, `shutdown`), for `/metrics`.
    public var errorCounts: [String: Int] { errors.snapshot() }

    /// Connections currently running a job, and jobs waiting for one.
    public var usage: (inUse: Int, waiting: Int) { queue.usage }

    /// Pipelines sent since start, and the statements they carried (see `PostgresConnection.pipeline`).
    public var pipelineCounts: (pipelines: Int, statements: Int) { queue.pipelineCounts }

    /// Stops the workers after the queued jobs; later calls fail with `.shutdown`.
    public func shutdown() {
        queue.close()
    }
}

/// Counts of data-layer errors, by kind.
final class ErrorCounts: @unchecked Sendable {
    // Safety: `counts` is only touched while `lock` is held.
    private let lock = NSLock()
    private var counts: [String: Int] = [:]

    func record(_ error: PostgresError) {
        let kind: String
        switch error.kind {
        case .connection: kind = "connection"
        case .poolTimeout: kind = "pool_timeout"
        case .decoding: kind = "decoding"
        case .shutdown: kind = "shutdown"
        case .server: kind = error.isStatementTimeout ? "statement_timeout" : "server"
        }
        lock.withLock { counts[kind, default: 0] += 1 }
    }

    func snapshot() -> [String: Int] {
        lock.withLock { counts }
    }
}

