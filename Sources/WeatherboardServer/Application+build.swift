import Board
import Database
import Hummingbird
import Logging
import NIOCore
import RateLimit
import ServiceLifecycle
import Weather

/// What the application needs from outside: made once per process (or per test) and shut down with it.
public struct AppDependencies: Sendable {
    public let database: PostgresPool
    public let hasher: PasswordHasher
    public let rateLimiter: RateLimiter
    public let accounts: AccountService
    public let posts: PostService
    public let moderation: ModerationService
    /// What expires, purged in the background (CONTRACT §7).
    public let purger: Purger
    public let metrics: AppMetrics
    /// Region lookups and search (CONTRACT §6).
    public let regions: RegionStore
    /// Cached current weather per region (CONTRACT §6); the feed and `include=weather` use it too.
    public let weather: any WeatherProviding

    public init(
        database: PostgresPool, hasher: PasswordHasher, rateLimiter: RateLimiter, reportPolicy: ReportPolicy = ReportPolicy(),
        purgePolicy: Purger.Policy = Purger.Policy(), regions: RegionStore? = nil, weather: (any WeatherProviding)? = nil, metrics: AppMetrics = AppMetrics()
    ) {
        self.database = database
        self.metrics = metrics
        self.hasher = hasher
        self.rateLimiter = rateLimiter
        self.accounts = AccountService(store: PostgresAccountStore(database: database), hasher: hasher, rateLimiter: rateLimiter)
        let moderationStore = PostgresModerationStore(database: database)
        let filter = TermFilter { try await moderationStore.terms() }
        let regions = regions ?? RegionStore(database: database)
        self.regions = regions
        self.posts = PostService(store: PostgresPostStore(database: database), regions: regions, rateLimiter: rateLimiter, filter: filter)
        self.moderation = ModerationService(store: moderationStore, posts: posts, rateLimiter: rateLimiter, policy: reportPolicy)
        self.purger = Purger(database: database, policy: purgePolicy)
        self.weather = weather ?? WeatherService(provider: nil, regions: regions, database: database)
    }

    public static func make(configuration: AppConfiguration, logger: Logger) -> AppDependencies {
        let pool = PostgresPool(
            configuration: PostgresConfiguration(
                conninfo: configuration.databaseURL,
                poolSize: configuration.dbPoolSize,
                statementTimeoutMilliseconds: configuration.dbStatementTimeoutMilliseconds,
                pipelineDepth: configuration.dbPipelineDepth
            ),
            logger: logger
        )
        let rateLimiter = RateLimiter(database: pool, enabled: configuration.rateLimitsEnabled)
        let regions = RegionStore(database: pool)
        let metrics = AppMetrics()
        return AppDependencies(
            database: pool,
            hasher: PasswordHasher(threads: configuration.passwordHashThreads),
            rateLimiter: rateLimiter,
            reportPolicy: ReportPolicy(hideThreshold: configuration.reportHideThreshold, trustAgeSeconds: configuration.reportTrustAgeSeconds),
            purgePolicy: Purger.Policy(evidenceDays: configuration.reportEvidenceDays),
            regions: regions,
            weather: WeatherService.make(configuration: configuration, regions: regions, database: pool, logger: logger, observer: metrics.recordWeather),
            metrics: metrics
        )
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
        services: [
            DatabaseShutdownService(dependencies: dependencies),
            PurgerService(purger: dependencies.purger, interval: .seconds(configuration.purgeIntervalSeconds), metrics: dependencies.metrics, logger: logger),
        ],
        onServerRunning: onServerRunning,
        logger: logger
    )
}

func buildRouter(configuration: AppConfiguration, dependencies: AppDependencies, logger: Logger) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self)
    router.add(middleware: RequestEnvelopeMiddleware(logger: logger, metrics: dependencies.metrics))
    router.add(middleware: InputTextMiddleware())
    router.addRoutes(HealthController(database: dependencies.database).endpoints)
    router.addRoutes(MetricsController(metrics: dependencies.metrics, database: dependencies.database).endpoints)
    router.addRoutes(OpenAPIController(document: OpenAPIController.loadDocument()).endpoints)

    let api = router.group("v1")
        .add(middleware: AuthenticationMiddleware(accounts: dependencies.accounts, clientAddress: ClientAddress(trustedProxies: configuration.trustedProxies)))
    api.addRoutes(VocabularyController().endpoints)
    api.addRoutes(AccountsController(accounts: dependencies.accounts, posts: dependencies.posts).endpoints)
    api.addRoutes(PostsController(posts: dependencies.posts, moderation: dependencies.moderation, weather: dependencies.weather).endpoints)
    api.addRoutes(FeedController(posts: dependencies.posts, regions: dependencies.regions, weather: dependencies.weather).endpoints)
    api.addRoutes(ModerationController(moderation: dependencies.moderation, posts: dependencies.posts).endpoints)
    api.addRoutes(RegionsController(regions: dependencies.regions, weather: dependencies.weather).endpoints)
    return router
}

/// Closes the database pool and the hashing threads after the HTTP server has drained
/// (a service group stops its services in reverse order).
struct DatabaseShutdownService: Service {
    let dependencies: AppDependencies

    func run() async throws {
        try? await gracefulShutdown()
        dependencies.database.shutdown()
        await dependencies.hasher.shutdown()
    }
}
