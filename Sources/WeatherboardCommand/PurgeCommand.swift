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
        // The server's own dependencies: the same purger, with the media store whose files a pass deletes.
        let dependencies = AppDependencies.make(configuration: configuration, logger: logger)
        let clock = ContinuousClock()
        let start = clock.now
        let outcome: Result<Purger.Pass, any Error>
        do {
            outcome = .success(try await dependencies.purger.runOnce())
        } catch {
            outcome = .failure(error)
        }
        await dependencies.shutdown()
        let pass: Purger.Pass
        do {
            pass = try outcome.get()
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
