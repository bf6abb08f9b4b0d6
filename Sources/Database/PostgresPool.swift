import DequeModule
import Foundation
import Logging

/// A bounded pool of libpq connections, each pinned to its own dedicated thread.
///
/// Callers never block Swift's cooperative pool: `withConnection` suspends the calling task, a pool thread
/// runs the closure (blocking in libpq there), and the task resumes with the result. When every connection
/// is busy, callers wait in a FIFO queue until `acquireTimeoutMilliseconds`, then fail with `.poolTimeout`.
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
        let queue = JobQueue()
        self.queue = queue
        var workers: [Worker] = []
        for index in 0..<configuration.poolSize {
            let worker = Worker(index: index, configuration: configuration, queue: queue, logger: logger)
            workers.append(worker)
            worker.start()
        }
        self.workers = workers
        let watchdog = Thread {
            // Fails queued jobs whose acquire deadline passed while every connection stayed busy.
            while queue.expireOverdue(now: DispatchTime.now().uptimeNanoseconds) {
                usleep(20_000)
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
    public func query(_ query: SQLQuery, timeoutMilliseconds: Int? = nil) async throws -> PostgresRows {
        try await withConnection(timeoutMilliseconds: timeoutMilliseconds) { try $0.query(query) }
    }

    /// Runs one statement and returns the number of rows it changed.
    @discardableResult
    public func execute(_ query: SQLQuery) async throws -> Int {
        try await withConnection { try $0.execute(query) }
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

    /// Stops the workers after the queued jobs; later calls fail with `.shutdown`.
    public func shutdown() {
        queue.close()
    }
}

/// One unit of work for a pool thread. Exactly one of `run` or `fail` is called, exactly once.
final class Job: @unchecked Sendable {
    // Safety: fields are immutable; the queue's lock decides which single thread calls run or fail.
    let deadline: UInt64
    let run: (PostgresConnection) -> Void
    let fail: (any Error) -> Void

    init(deadline: UInt64, run: @escaping (PostgresConnection) -> Void, fail: @escaping (any Error) -> Void) {
        self.deadline = deadline
        self.run = run
        self.fail = fail
    }
}

/// The FIFO of jobs shared by a pool's threads: a mutex and a condition variable.
final class JobQueue: @unchecked Sendable {
    // Safety: every mutable field is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var jobs: Deque<Job> = []
    private var busy = 0
    private var closed = false

    func enqueue(_ job: Job) {
        condition.lock()
        if closed {
            condition.unlock()
            job.fail(PostgresError(kind: .shutdown, message: "the database pool is shut down"))
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Blocks until a job is available; nil once the queue is closed and drained.
    func next() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty {
            if closed { return nil }
            condition.wait()
        }
        busy += 1
        return jobs.removeFirst()
    }

    func finished() {
        condition.lock()
        busy -= 1
        condition.unlock()
    }

    /// Fails jobs past their deadline (each job has its own: `/readyz` waits 1 s, others longer).
    /// Returns false once the queue is closed.
    func expireOverdue(now: UInt64) -> Bool {
        condition.lock()
        var expired: [Job] = []
        if jobs.contains(where: { $0.deadline <= now }) {
            var kept: Deque<Job> = []
            for job in jobs {
                if job.deadline <= now { expired.append(job) } else { kept.append(job) }
            }
            jobs = kept
        }
        let open = !closed
        condition.unlock()
        for job in expired {
            job.fail(PostgresError(kind: .poolTimeout, message: "no database connection became free in time"))
        }
        return open
    }

    var usage: (inUse: Int, waiting: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (busy, jobs.count)
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}

/// A pool thread and the connection it owns.
final class Worker: @unchecked Sendable {
    // Safety: `connection` and `retryAfter` are touched only by this worker's own thread, inside `loop()`.
    private let index: Int
    private let configuration: PostgresConfiguration
    private let queue: JobQueue
    private let logger: Logger
    private var connection: PostgresConnection?
    private var retryAfter: UInt64 = 0

    init(index: Int, configuration: PostgresConfiguration, queue: JobQueue, logger: Logger) {
        self.index = index
        self.configuration = configuration
        self.queue = queue
        self.logger = logger
    }

    func start() {
        let thread = Thread { [self] in self.loop() }
        thread.name = "db-\(index)"
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func loop() {
        while let job = queue.next() {
            if let connection = usableConnection(for: job) {
                job.run(connection)
                if !connection.isOpen {
                    logger.warning("database connection lost; it will be replaced", metadata: ["worker": "\(index)"])
                    self.connection = nil
                } else if !connection.isIdle {
                    // A closure left a transaction open: never hand such a session to the next caller.
                    try? connection.simpleQuery("ROLLBACK")
                }
            }
            queue.finished()
        }
        connection?.close()
        connection = nil
    }

    /// The worker's connection, checked and reconnected if needed. On failure the job is failed and nil returned.
    private func usableConnection(for job: Job) -> PostgresConnection? {
        if let connection {
            if connection.probeIdle() { return connection }
            logger.info("database connection closed by the server; reconnecting", metadata: ["worker": "\(index)"])
            connection.close()
            self.connection = nil
        }
        let now = DispatchTime.now().uptimeNanoseconds
        if now < retryAfter {
            job.fail(PostgresError(kind: .connection, message: "the database is unreachable"))
            return nil
        }
        do {
            let fresh = try PostgresConnection(
                conninfo: configuration.conninfo,
                statementTimeoutMilliseconds: configuration.statementTimeoutMilliseconds,
                connectTimeoutSeconds: configuration.connectTimeoutSeconds
            )
            connection = fresh
            retryAfter = 0
            return fresh
        } catch {
            retryAfter = DispatchTime.now().uptimeNanoseconds + UInt64(configuration.reconnectBackoffMilliseconds) * 1_000_000
            logger.warning("cannot connect to the database", metadata: ["worker": "\(index)", "error": "\(error)"])
            job.fail(error)
            return nil
        }
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
