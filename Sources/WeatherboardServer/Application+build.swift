import Database
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Weather

/// What the application needs from outside: made once per process (or per test) and shut down with it.
public struct AppDependencies: Sendable {
    public let database: PostgresPool
    /// Region lookups and search (CONTRACT §6).
    public let regions: RegionStore
    /// Cached current weather per region (CONTRACT §6); the feed and `include=weather` use it too.
    public let weather: any WeatherProviding

    public init(database: PostgresPool, regions: RegionStore? = nil, weather: (any WeatherProviding)? = nil) {
        self.database = database
        let regions = regions ?? RegionStore(database: database)
        self.regions = regions
        self.weather = weather ?? WeatherService(provider: nil, regions: regions, database: database)
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
        let regions = RegionStore(database: pool)
        return AppDependencies(database: pool, regions: regions, weather: WeatherService.make(configuration: configuration, regions: regions, database: pool, logger: logger))
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
    router.addRoutes(RegionsController(regions: dependencies.regions, weather: dependencies.weather).endpoints)
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
