import Foundation
import Logging

/// A pool thread's loop and the connection it owns.
///
/// The connection lives in `run()`'s locals: only this thread ever touches it, so the worker itself holds
/// nothing mutable and is `Sendable` as it is.
struct Worker: Sendable {
    let index: Int
    let configuration: PostgresConfiguration
    let queue: JobQueue
    let statements: StatementCounter
    let canceller: PostgresCanceller
    let logger: Logger

    /// Takes jobs until the queue is closed, then closes the connection.
    func run() {
        var connection: PostgresConnection?
        var retryAfter: UInt64 = 0
        var finished = false
        while case let batch = queue.next(worker: index, limit: configuration.pipelineDepth, finished: finished), !batch.isEmpty {
            finished = true
            guard let usable = usableConnection(&connection, retryAfter: &retryAfter, failing: batch) else { continue }
            var cancelSettled = true
            if batch.count == 1 {
                cancelSettled = runAlone(batch[0], on: usable)
            } else {
                runPipelined(batch, on: usable)
            }
            if !cancelSettled {
                logger.warning("a cancel request did not reach the database in time; closing the connection", metadata: ["worker": "\(index)"])
                usable.close()
                connection = nil
            } else if !usable.isOpen {
                logger.warning("database connection lost; it will be replaced", metadata: ["worker": "\(index)"])
                connection = nil
            } else if !usable.isIdle && !rolledBack(usable) {
                // Its session state is unknown (a transaction may still be open): never hand it to the next caller.
                logger.warning("ROLLBACK failed; closing the connection", metadata: ["worker": "\(index)"])
                usable.close()
                connection = nil
            }
        }
        connection?.close()
    }

    /// Ends the transaction a job left open; true when the session is idle again.
    private func rolledBack(_ connection: PostgresConnection) -> Bool {
        do {
            try connection.simpleQuery("ROLLBACK")
        } catch {
            return false
        }
        return connection.isIdle
    }

    /// Runs one job on the connection; a cancellation while it runs interrupts its statement on the server.
    /// Returns false when a cancel request could not be confirmed delivered: the connection must then be closed.
    private func runAlone(_ job: Job, on connection: PostgresConnection) -> Bool {
        let interruption = connection.cancelHandle.map { Job.Interruption(handle: $0, canceller: canceller) }
        guard let completion = job.begin(cancel: interruption) else { return true }
        let ended: (cancelled: Bool, request: CancelRequest?)
        switch completion {
        case .rows(let complete):
            let result = Result { try connection.query(job.statement ?? "") }
            ended = job.end()
            complete(ended.cancelled && result.failed ? .failure(CancellationError()) : result)
        case .closure(let run, _):
            // Statements the closure starts after a cancellation fail at once (`PostgresConnection.checkCancelled`).
            connection.runningJob = job
            let report = run(connection)
            connection.runningJob = nil
            ended = job.end()
            report(ended.cancelled)
        }
        // A cancel request still on its way could hit the next statement: wait for it, as long as a connection
        // attempt may take, before the connection runs anything else.
        guard let request = ended.request else { return true }
        return request.settle(timeout: UInt64(max(1, configuration.connectTimeoutSeconds)) * 1_000_000_000, canceller: canceller)
    }

    /// Sends the statements as one pipeline; returns how many went (0 when fewer than two).
    private func runPipelined(_ batch: [Job], on connection: PostgresConnection) {
        // Jobs cancelled while they waited are dropped here; the rest run to the end, even if cancelled later.
        let jobs = batch.filter { $0.beginPipelined() }
        // Counted before any caller has its answer, so a caller reading the counts after it sees its own pipeline.
        if jobs.count > 1 { queue.countPipeline(jobs.count) }
        connection.pipeline(jobs.map { $0.statement ?? "" }) { index, result in
            jobs[index].report(result)
        }
    }

    /// The worker's connection, checked and reconnected if needed. On failure the jobs are failed and nil returned.
    private func usableConnection(_ connection: inout PostgresConnection?, retryAfter: inout UInt64, failing jobs: [Job]) -> PostgresConnection? {
        if let current = connection {
            if current.probeIdle() { return current }
            logger.info("database connection closed by the server; reconnecting", metadata: ["worker": "\(index)"])
            current.close()
            connection = nil
        }
        let now = DispatchTime.now().uptimeNanoseconds
        if now < retryAfter {
            let error = PostgresError(kind: .connection, message: "the database is unreachable")
            jobs.forEach { $0.fail(error) }
            return nil
        }
        do {
            let fresh = try PostgresConnection(
                conninfo: configuration.conninfo,
                statementTimeoutMilliseconds: configuration.statementTimeoutMilliseconds,
                connectTimeoutSeconds: configuration.connectTimeoutSeconds
            )
            fresh.statementCounter = statements
            connection = fresh
            retryAfter = 0
            return fresh
        } catch {
            retryAfter = DispatchTime.now().uptimeNanoseconds + UInt64(configuration.reconnectBackoffMilliseconds) * 1_000_000
            logger.warning("cannot connect to the database", metadata: ["worker": "\(index)", "error": "\(error)"])
            jobs.forEach { $0.fail(error) }
            return nil
        }
    }
}

extension Result {
    fileprivate var failed: Bool {
        if case .failure = self { return true }
        return false
    }
}
