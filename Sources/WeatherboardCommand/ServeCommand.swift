import ArgumentParser
import Foundation
import Logging
import Push
import ServiceLifecycle
import WeatherboardServer

/// `weatherboard serve`: configuration from the environment (CONTRACT §7), flags override it.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the HTTP API. SIGTERM drains in-flight requests, then exits 0."
    )

    @Option(help: "Address to bind (HOST, default 127.0.0.1).") var host: String?
    @Option(help: "Port to bind (PORT, default 8080).") var port: Int?
    @Option(name: .customLong("database-url"), help: "libpq URI or conninfo (DATABASE_URL; PG* variables also work).") var databaseURL: String?
    @Option(name: .customLong("pool-size"), help: "Database connections (DB_POOL_SIZE, default 2 × CPU cores, at least 4).") var poolSize: Int?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error (LOG_LEVEL, default info).") var logLevel: String?

    func run() async throws {
        var environment = ProcessInfo.processInfo.environment
        if let logLevel { environment["LOG_LEVEL"] = logLevel }
        var configuration: AppConfiguration
        do {
            configuration = try AppConfiguration(environment: environment)
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
        if let host { configuration.host = host }
        if let port { configuration.port = port }
        if let databaseURL { configuration.databaseURL = databaseURL }
        if let poolSize { configuration.dbPoolSize = poolSize }

        let logger = LogSetup.bootstrap(configuration: configuration, label: "weatherboard")
        // PUSH=apns: the key read and every APNS_* checked before anything starts.
        let pushSender: APNsClient?
        do { pushSender = try configuration.push?.makeClient() } catch let error as ConfigurationError { throw ValidationError(error.description) }
        let dependencies = AppDependencies.make(configuration: configuration, pushSender: pushSender, logger: logger)
        let app = buildApplication(configuration: configuration, dependencies: dependencies, logger: logger) { channel in
            logger.notice("listening", metadata: ["address": "\(channel.localAddress.map { "\($0)" } ?? "?")"])
        }
        var groupConfiguration = ServiceGroupConfiguration(
            services: [.init(service: app)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(configuration.shutdownGraceSeconds)
        try await ServiceGroup(configuration: groupConfiguration).run()
        logger.notice("stopped")
    }
}
