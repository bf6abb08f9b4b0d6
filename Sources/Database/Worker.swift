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
    let logger: Logger

    /// Takes jobs until the queue is closed, then closes the connection.
    func run() {
        var connection: PostgresConnection?
        var retryAfter: UInt64 = 0
        var pipelined: Int?
        while case let batch = queue.next(worker: index, limit: configuration.pipelineDepth, finished: pipelined), !batch.isEmpty {
            pipelined = 0
            guard let usable = usableConnection(&connection, retryAfter: &retryAfter, failing: batch) else { continue }
            if batch.count == 1 {
                runAlone(batch[0], on: usable)
            } else {
                pipelined = runPipelined(batch, on: usable)
            }
            if !usable.isOpen {
                logger.warning("database connection lost; it will be replaced", metadata: ["worker": "\(index)"])
                connection = nil
            } else if !usable.isIdle {
                // A closure left a transaction open: never hand such a session to the next caller.
                try? usable.simpleQuery("ROLLBACK")
            }
        }
        connection?.close()
    }

    /// Runs one job on the connection; a cancellation while it runs interrupts its statement on the server.
    private func runAlone(_ job: Job, on connection: PostgresConnection) {
        guard let completion = job.begin(cancel: connection.cancelHandle) else { return }
        switch completion {
        case .rows(let complete):
            let result = Result { try connection.query(job.statement ?? "") }
            let cancelled = job.end()
            complete(cancelled && result.failed ? .failure(CancellationError()) : result)
        case .closure(let run, _):
            // Statements the closure starts after a cancellation fail at once (`PostgresConnection.checkCancelled`).
            connection.runningJob = job
            let report = run(connection)
            connection.runningJob = nil
            report(job.end())
        }
    }

    /// Sends the statements as one pipeline; returns how many went (0 when fewer than two).
    private func runPipelined(_ batch: [Job], on connection: PostgresConnection) -> Int {
        // Jobs cancelled while they waited are dropped here; the rest run to the end, even if cancelled later.
        let jobs = batch.filter { $0.beginPipelined() }
        connection.pipeline(jobs.map { $0.statement ?? "" }) { index, result in
            jobs[index].report(result)
        }
        return jobs.count > 1 ? jobs.count : 0
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
