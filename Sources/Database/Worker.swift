import Foundation
import Logging

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
        while case let batch = queue.next(limit: configuration.pipelineDepth), !batch.isEmpty {
            if let connection = usableConnection(failing: batch) {
                if batch.count == 1 {
                    batch[0].run(connection)
                } else {
                    let statements = batch.map { $0.statement! }
                    connection.pipeline(statements.map(\.query)) { index, result in
                        statements[index].complete(result)
                    }
                }
                if !connection.isOpen {
                    logger.warning("database connection lost; it will be replaced", metadata: ["worker": "\(index)"])
                    self.connection = nil
                } else if !connection.isIdle {
                    // A closure left a transaction open: never hand such a session to the next caller.
                    try? connection.simpleQuery("ROLLBACK")
                }
            }
            queue.finished(pipelined: batch.count > 1 ? batch.count : 0)
        }
        connection?.close()
        connection = nil
    }

    /// The worker's connection, checked and reconnected if needed. On failure the jobs are failed and nil returned.
    private func usableConnection(failing jobs: [Job]) -> PostgresConnection? {
        if let connection {
            if connection.probeIdle() { return connection }
            logger.info("database connection closed by the server; reconnecting", metadata: ["worker": "\(index)"])
            connection.close()
            self.connection = nil
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
