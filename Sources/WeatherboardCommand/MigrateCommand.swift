import ArgumentParser
import Board
import Database
import Foundation
import Logging
import Weather
import WeatherboardServer

/// `weatherboard migrate`: applies `sql/` in order, each file once, in a transaction.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply the SQL migrations (and load the bundled data). Safe to run twice or concurrently."
    )

    @Option(name: .customLong("database-url"), help: "libpq URI or conninfo (DATABASE_URL; PG* variables also work).") var databaseURL: String?
    @Option(name: .customLong("sql-dir"), help: "Directory of migrations (default: found next to the binary).") var sqlDirectory: String?

    func run() async throws {
        let configuration = try OperatorContext.configuration(databaseURL: databaseURL)
        let logger = LogSetup.bootstrap(configuration: configuration, label: "weatherboard.migrate")
        guard let directory = Migrator.locateDirectory(explicit: sqlDirectory) else {
            throw ValidationError("cannot find the sql/ migrations directory; pass --sql-dir or set WEATHERBOARD_SQL_DIR")
        }
        let pool = OperatorContext.pool(configuration, logger: logger)
        defer { pool.shutdown() }
        do {
            let outcome = try await Migrator(directory: directory).run(on: pool, logger: logger)
            print("migrations: \(outcome.applied.count) applied, \(outcome.alreadyApplied) already applied (from \(directory.path))")
            for name in outcome.applied { print("  applied \(name)") }
            let catalog = try await RegionCatalog.load(file: RegionCatalog.file(inMigrationsDirectory: directory), on: pool, logger: logger)
            print(catalog.loadedRegions.map { "region catalog: loaded \($0) regions" } ?? "region catalog: already loaded")
            let indexed = try await PostgresPostStore.backfillSearch(on: pool)
            if indexed > 0 { print("search: indexed \(indexed) posts written before search") }
        } catch let error as PostgresError {
            throw OperatorFailure("migrate failed: \(error.message)")
        }
    }
}

/// Shared set-up for operator commands that talk to PostgreSQL.
enum OperatorContext {
    static func configuration(databaseURL: String?) throws -> AppConfiguration {
        var configuration: AppConfiguration
        do {
            configuration = try AppConfiguration(environment: ProcessInfo.processInfo.environment)
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
        if let databaseURL { configuration.databaseURL = databaseURL }
        return configuration
    }

    static func pool(_ configuration: AppConfiguration, logger: Logger) -> PostgresPool {
        PostgresPool(
            configuration: PostgresConfiguration(conninfo: configuration.databaseURL, poolSize: 1, statementTimeoutMilliseconds: 0, acquireTimeoutMilliseconds: 120_000),
            logger: logger
        )
    }
}

/// A one-line failure message and a non-zero exit.
struct OperatorFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
