import Foundation
import Logging
import Synchronization

/// A bounded pool of libpq connections, each pinned to its own dedicated thread.
///
/// Callers never block Swift's cooperative pool: `withConnection` suspends the calling task, a pool thread
/// runs the closure (blocking in libpq there), and the task resumes with the result. When every connection
/// is busy, callers wait in a FIFO queue until `acquireTimeoutMilliseconds`, then fail with `.poolTimeout`; when
/// `maxWaitingJobs` already wait, a new caller fails at once with `.queueFull`.
///
/// Under load, single statements (`query`, `execute`) that queued behind busy connections go to PostgreSQL
/// several at a time as one pipeline, and only `activeConnections` connections work at once while the queue
/// keeps moving; the others stand by for slow statements and transactions (see `PostgresConfiguration`).
/// Deadlines (acquire timeouts, the standby rule) are kept by one timer thread that sleeps until the next
/// one; an idle pool has all its threads blocked without a timeout (see `JobQueue`).
///
/// A caller whose task is cancelled gets `CancellationError`: a job still waiting leaves the queue at once
/// without using a connection; a statement running alone is cancelled on the server (`PQcancel`, sent by the
/// pool's cancel thread, so the cancelling task never waits for the server) and the connection stays in the
/// pool, or is closed when the request could not be delivered within the connect timeout; a statement already
/// sent in a pipeline runs to the end and its outcome is discarded (cancelling it on the server could hit
/// another statement of the batch). In a `withConnection` closure, the running statement is cancelled and the
/// ones after it fail at once, so a transaction rolls back.
///
/// Broken connections are noticed (before each use, and after any failure) and replaced lazily, so the
/// pool heals by itself after PostgreSQL restarts. While the database is down, each worker retries at most
/// once per `reconnectBackoffMilliseconds` and fails the other jobs at once, so requests get a fast error.
///
/// `shutdown()` ends the pool's threads; a pool released without it ends them too.
public final class PostgresPool: Sendable {
    public let configuration: PostgresConfiguration
    let queue: JobQueue
    private let canceller = PostgresCanceller()
    private let threads: Mutex<[PoolThread]>
    /// The cancel thread, apart: it may be blocked in `PQcancel` for good, so it is joined only when idle.
    private let cancelThread: Mutex<PoolThread?>
    private let errors = ErrorCounts()
    private let statements = StatementCounter()

    public init(configuration: PostgresConfiguration, logger: Logger = Logger(label: "weatherboard.db")) {
        self.configuration = configuration
        let queue = JobQueue(
            workers: configuration.poolSize,
            activeLimit: configuration.activeConnections,
            spareAfter: UInt64(configuration.spareAfterMilliseconds) * 1_000_000,
            maxWaiting: configuration.maxWaitingJobs
        )
        self.queue = queue
        // The threads hold the queue, never the pool, so a pool nobody holds any more is released (and ends them).
        var threads: [PoolThread] = []
        let canceller = self.canceller
        for index in 0..<configuration.poolSize {
            let worker = Worker(
                index: index, configuration: configuration, queue: queue, statements: statements, canceller: canceller, logger: logger
            )
            let thread = PoolThread.start(name: "db-\(index)") {
                queue.started(threadID: currentThreadID())
                worker.run()
                queue.ended()
            }
            if let thread { threads.append(thread) } else { logger.error("cannot start a database pool thread", metadata: ["worker": "\(index)"]) }
        }
        let timer = PoolThread.start(name: "db-timer") {
            queue.started(threadID: currentThreadID())
            queue.runTimer()
            queue.ended()
        }
        if let timer { threads.append(timer) } else { logger.error("cannot start the database pool's timer thread") }
        self.threads = Mutex(threads)
        let cancelThread = PoolThread.start(name: "db-cancel") {
            queue.started(threadID: currentThreadID())
            canceller.run()
            queue.ended()
        }
        if cancelThread == nil { logger.error("cannot start the database pool's cancel thread") }
        self.cancelThread = Mutex(cancelThread)
    }

    deinit {
        // Nobody can queue work any more: the threads end after their current jobs, joined by nobody.
        queue.close()
        _ = canceller.close()
        for thread in threads.withLock({ $0 }) { thread.detach() }
        cancelThread.withLock { $0?.detach() }
    }

    /// Runs `body` with a connection on a pool thread. The closure is synchronous and may run many statements.
    ///
    /// If the task is cancelled while `body` runs, its current statement is cancelled on the server and
    /// the statements it starts after that fail with `CancellationError`; the caller gets `CancellationError`
    /// unless `body` returned normally all the same.
    public func withConnection<T: Sendable>(
        timeoutMilliseconds: Int? = nil,
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        let job = Job(timeout: UInt64(timeoutMilliseconds ?? configuration.acquireTimeoutMilliseconds) * 1_000_000)
        let queue = self.queue
        let errors = self.errors
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let completion = Job.Completion.closure { connection in
                    let result = Result { try body(connection) }
                    return { cancelled in
                        if cancelled, case .failure = result {
                            continuation.resume(throwing: CancellationError())
                            return
                        }
                        if case .failure(let error as PostgresError) = result { errors.record(error) }
                        continuation.resume(with: result)
                    }
                } fail: { error in
                    if let error = error as? PostgresError { errors.record(error) }
                    continuation.resume(throwing: error)
                }
                queue.enqueue(job, completion: completion)
            }
        } onCancel: {
            queue.cancel(job)
        }
    }

    /// Runs one statement and returns its rows.
    ///
    /// A single statement may share a pipeline with other single statements that queued while every
    /// connection was busy (see `PostgresConnection.pipeline`). `timeoutMilliseconds` bounds the wait for
    /// a connection; once sent, the statement runs under the session's statement timeout.
    public func query(_ query: SQLQuery, timeoutMilliseconds: Int? = nil) async throws -> PostgresRows {
        let job = Job(timeout: UInt64(timeoutMilliseconds ?? configuration.acquireTimeoutMilliseconds) * 1_000_000, statement: query)
        let queue = self.queue
        let errors = self.errors
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<PostgresRows, any Error>) in
                queue.enqueue(
                    job,
                    completion: .rows { result in
                        if case .failure(let error as PostgresError) = result { errors.record(error) }
                        continuation.resume(with: result)
                    }
                )
            }
        } onCancel: {
            queue.cancel(job)
        }
    }

    /// Runs one statement and returns the number of rows it changed.
    @discardableResult
    public func execute(_ query: SQLQuery) async throws -> Int {
        try await self.query(query).affectedRows
    }

    /// Runs `body` in a transaction on one connection: COMMIT when it returns, ROLLBACK when it throws.
    @discardableResult
    public func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await withConnection { try $0.transaction(body) }
    }

    /// Failed statements and connection problems since start, by kind (`connection`, `pool_timeout`, `queue_full`,
    /// `statement_timeout`, `server`, `decoding`, `shutdown`), for `/metrics`.
    public var errorCounts: [String: Int] { errors.snapshot() }

    /// Parameterized statements run so far by this pool's connections (`query`, `execute`, pipelines and the
    /// statements of transactions; not `simpleQuery`).
    public var statementCount: Int { statements.value }

    /// Connections currently running a job, and jobs waiting for one.
    public var usage: (inUse: Int, waiting: Int) { queue.usage }

    /// Pipelines sent since start, and the statements they carried (see `PostgresConnection.pipeline`).
    public var pipelineCounts: (pipelines: Int, statements: Int) { queue.pipelineCounts }

    /// Ends the pool: queued jobs fail with `.shutdown` (and so do later calls), running ones finish, then
    /// every pool thread ends and closes its connection. Returns once they have all ended, so it blocks for
    /// as long as the running jobs take (nothing, on an idle pool). Calling it again does nothing.
    public func shutdown() {
        queue.close()
        let threads = self.threads.withLock { threads in
            defer { threads.removeAll() }
            return threads
        }
        for thread in threads {
            // Called from a job on one of the pool's own threads: that one ends when the job returns.
            if thread.isCurrent { thread.detach() } else { thread.join() }
        }
        // After the workers: one of them may still be waiting for a cancel request to be delivered.
        let idle = canceller.close()
        if let thread = cancelThread.withLock({ thread in defer { thread = nil }; return thread }) {
            if idle { thread.join() } else { thread.detach() }
        }
    }
}

/// The kernel's id for the calling thread (`/proc/self/task/<id>`), or 0 where there is none.
private func currentThreadID() -> Int {
    #if os(Linux)
    var buffer = [CChar](repeating: 0, count: 64)
    let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard length > 0 else { return 0 }
    // "<pid>/task/<tid>"
    let link = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return Int(link.split(separator: "/").last ?? "") ?? 0
    #else
    return 0
    #endif
}
