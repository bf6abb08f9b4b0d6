import ArgumentParser
import Board
import Database
import Foundation
import WeatherboardServer

/// `weatherboard purge`: one pass of the background purger, now (the server runs it every
/// PURGE_INTERVAL_SECONDS by itself; this is for operators and the bench).
struct PurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Run one pass of the background purger now and print what it removed."
    )

    @Option(name: .customLong("database-url"), help: "libpq URI or conninfo (DATABASE_URL; PG* variables also work).") var databaseURL: String?

    func run() async throws {
        let configuration = try OperatorContext.configuration(databaseURL: databaseURL)
        let logger = LogSetup.bootstrap(configuration: configuration, label: "weatherboard.purge")
        let pool = OperatorContext.pool(configuration, logger: logger)
        defer { pool.shutdown() }
        let purger = Purger(database: pool, policy: Purger.Policy(evidenceDays: configuration.reportEvidenceDays))
        let clock = ContinuousClock()
        let start = clock.now
        let pass: Purger.Pass
        do {
            pass = try await purger.runOnce()
        } catch let error as PostgresError {
            throw OperatorFailure("purge failed: \(error.message)")
        }
        let elapsed = clock.now - start
        guard pass.ran else {
            print("purge: another instance is purging now; nothing done")
            return
        }
        let counts = pass.counts.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        print("purge: \(counts) in \(elapsed.formatted(.units(allowed: [.milliseconds], width: .narrow)))")
    }
}
