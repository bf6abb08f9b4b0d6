import Database
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// What the application needs from outside: made once per process (or per test) and shut down with it.
public struct AppDependencies: Sendable {
    public let database: PostgresPool

    public init(database: PostgresPool) {
        self.database = database
    }

    public static func make(configuration: AppConfiguration, logger: Logger) -> AppDependencies {
        let pool = PostgresPool(
            configuration: PostgresConfiguration(
                conninfo: configuration.databaseURL,
                poolSize: configuration.dbPoolSize,
                statementTimeoutMilliseconds: configuration.dbStatementTimeoutMilliseconds
            ),
            logger: logger
        )
        return AppDependencies(database: pool)
    }
}

/// Builds the whole HTTP application. `weatherboard serve` and the tests both call this.
public func buildApplication(
    configuration: AppConfiguration,
    dependencies: AppDependencies,
    logger: Logger,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let router = buildRouter(configuration: configuration, dependencies: dependencies, logger: logger)
    return Application(
        router: router,
        server: .http1(configuration: .init(idleTimeout: .seconds(Int64(configuration.idleTimeoutSeconds)))),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "weatherboard"),
        services: [DatabaseShutdownService(database: dependencies.database)],
        onServerRunning: onServerRunning,
        logger: logger
    )
}

func buildRouter(configuration: AppConfiguration, dependencies: AppDependencies, logger: Logger) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self)
    router.add(middleware: RequestEnvelopeMiddleware(logger: logger))
    router.addRoutes(HealthController(database: dependencies.database).endpoints)
    router.addRoutes(OpenAPIController(document: OpenAPIController.loadDocument()).endpoints)
    return router
}

/// Closes the database pool after the HTTP server has drained (services stop in reverse order).
struct DatabaseShutdownService: Service {
    let database: PostgresPool

    func run() async throws {
        try? await gracefulShutdown()
        database.shutdown()
    }
}
