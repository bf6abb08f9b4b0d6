import Board
import Database
import Foundation
import Hummingbird
import Imaging
import Logging
import MediaStorage
import NIOCore
import NIOPosix
import Push
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
    /// Replies and the inbox (CONTRACT §13).
    public let replies: ReplyService
    /// Devices and notification settings (CONTRACT §14).
    public let notifications: NotificationService
    /// What expires, purged in the background (CONTRACT §7).
    public let purger: Purger
    public let metrics: AppMetrics
    /// Region lookups and search (CONTRACT §6).
    public let regions: RegionStore
    /// Cached current weather per region (CONTRACT §6); the feed and `include=weather` use it too.
    public let weather: any WeatherProviding
    /// Images on posts (CONTRACT §8): uploads, their files, their visibility.
    public let media: MediaService
    /// Decodes and encodes uploads on its own threads; shut down with the application.
    public let imageProcessor: ImageProcessor
    /// The media store's threads (S3 transfers, local file calls), apart from the shared pool that upload temp
    /// files use; shut down with the application.
    public let mediaIO: MediaIO
    /// Standbys for reads (`DATABASE_READ_URL`, CONTRACT §12); nil without one.
    public let reads: ReplicaRouter?
    /// The push queue (CONTRACT §14): its producers in the stores, its clock; `.off` queues nothing.
    public let push: PushQueue
    /// Where queued notifications go (`APNsClient`, or a test's); nil with `PUSH=off`: nothing is sent.
    public let pushSender: (any APNsSending)?

    public init(
        database: PostgresPool, hasher: PasswordHasher, rateLimiter: RateLimiter, reportPolicy: ReportPolicy = ReportPolicy(),
        purgePolicy: Purger.Policy = Purger.Policy(), regions: RegionStore? = nil, weather: (any WeatherProviding)? = nil, metrics: AppMetrics = AppMetrics(),
        mediaStore: (any MediaStore)? = nil, mediaIO: MediaIO? = nil, imageProcessor: ImageProcessor? = nil,
        conditionsTimeout: Duration = WeatherConditions.defaultTimeout, reads: ReplicaRouter? = nil, push: PushQueue = .off,
        pushSender: (any APNsSending)? = nil, logger: Logger = Logger(label: "weatherboard")
    ) {
        self.push = push
        self.pushSender = pushSender
        self.database = database
        self.reads = reads
        self.metrics = metrics
        self.hasher = hasher
        self.rateLimiter = rateLimiter
        let imageProcessor = imageProcessor ?? ImageProcessor(threads: 2, maxQueued: 8, timeLimit: .seconds(10))
        self.imageProcessor = imageProcessor
        let mediaIO = mediaIO ?? MediaIO()
        self.mediaIO = mediaIO
        let mediaStore = mediaStore ?? LocalMediaStore(directory: NSTemporaryDirectory() + "weatherboard-media", publicBaseURL: "", threadPool: mediaIO.threadPool)
        let moderationStore = PostgresModerationStore(database: database, reads: reads, push: push)
        let filter = TermFilter { try await moderationStore.terms() }
        self.media = MediaService(
            records: MediaRecords(database: database), files: MediaFiles(store: mediaStore), processor: imageProcessor,
            rateLimiter: rateLimiter, logger: logger, observer: metrics.recordMedia, filter: filter
        )
        self.accounts = AccountService(store: PostgresAccountStore(database: database, reads: reads), hasher: hasher, rateLimiter: rateLimiter)
        let regions = regions ?? RegionStore(database: database, reads: reads)
        self.regions = regions
        let weather = weather ?? WeatherService(provider: nil, regions: regions, database: database)
        self.weather = weather
        self.posts = PostService(
            store: PostgresPostStore(database: database, reads: reads), regions: regions, rateLimiter: rateLimiter, filter: filter, media: media,
            conditions: WeatherConditions(weather: weather, timeout: conditionsTimeout), trustAgeSeconds: reportPolicy.trustAgeSeconds
        )
        let replies = ReplyService(store: PostgresReplyStore(database: database, reads: reads, push: push), rateLimiter: rateLimiter, filter: filter)
        self.replies = replies
        self.moderation = ModerationService(store: moderationStore, posts: posts, rateLimiter: rateLimiter, policy: reportPolicy)
        self.notifications = NotificationService(store: PostgresNotificationStore(database: database, push: push), regions: regions)
        self.purger = Purger(database: database, policy: purgePolicy, media: media)
    }

    /// Ends the pool's, the hasher's, the image processor's and the media store's threads.
    public func shutdown() async {
        reads?.shutdown()
        database.shutdown()
        await hasher.shutdown()
        await imageProcessor.shutdown()
        await mediaIO.shutdown()
        await (pushSender as? APNsClient)?.shutdown()
    }

    public static func make(configuration: AppConfiguration, pushSender: (any APNsSending)? = nil, logger: Logger) -> AppDependencies {
        let pool = PostgresPool(
            configuration: PostgresConfiguration(
                conninfo: configuration.databaseURL,
                poolSize: configuration.dbPoolSize,
                statementTimeoutMilliseconds: configuration.dbStatementTimeoutMilliseconds,
                pipelineDepth: configuration.dbPipelineDepth,
                maxWaitingJobs: configuration.dbQueueMax
            ),
            logger: logger
        )
        let rateLimiter = RateLimiter(database: pool, enabled: configuration.rateLimitsEnabled)
        // Standbys get pools of the same shape as the primary's (a bad DATABASE_READ_URL was refused at startup).
        let reads = configuration.databaseReadURL.flatMap { url in
            try? ReplicaRouter(
                primary: pool, readConninfo: url, configuration: pool.configuration, maxLagMilliseconds: configuration.maxReplicaLagMilliseconds, logger: logger
            )
        }
        let regions = RegionStore(database: pool, reads: reads)
        let metrics = AppMetrics()
        let mediaIO = MediaIO()
        return AppDependencies(
            database: pool,
            hasher: PasswordHasher(threads: configuration.passwordHashThreads),
            rateLimiter: rateLimiter,
            reportPolicy: ReportPolicy(hideThreshold: configuration.reportHideThreshold, trustAgeSeconds: configuration.reportTrustAgeSeconds),
            purgePolicy: {
                var policy = Purger.Policy(evidenceDays: configuration.reportEvidenceDays)
                policy.trustAgeSeconds = configuration.reportTrustAgeSeconds
                policy.streamBacklogSeconds = configuration.streamBacklogSeconds
                return policy
            }(),
            regions: regions,
            weather: WeatherService.make(configuration: configuration, regions: regions, database: pool, logger: logger, observer: metrics.recordWeather),
            metrics: metrics,
            mediaStore: configuration.mediaStorage.makeStore(io: mediaIO, servedPrefix: MediaFiles.publicPrefix),
            mediaIO: mediaIO,
            imageProcessor: ImageProcessor(threads: configuration.imageThreads, maxQueued: configuration.imageQueue, timeLimit: .seconds(10)),
            reads: reads,
            push: PushQueue(policy: {
                var policy = PushQueue.Policy(enabled: pushSender != nil)
                if let push = configuration.push { policy.leaseSeconds = push.leaseSeconds }
                return policy
            }()),
            pushSender: pushSender,
            logger: logger
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
    // The live board's pump reads through a pool of its own (one connection: the pump is one task), closed with the hub.
    let pumpDatabase = PostgresPool(
        configuration: PostgresConfiguration(
            conninfo: configuration.databaseURL, poolSize: 1, statementTimeoutMilliseconds: configuration.dbStatementTimeoutMilliseconds
        ),
        logger: logger
    )
    let hub = StreamHub(
        settings: StreamHub.Settings(configuration), database: dependencies.database, pumpDatabase: pumpDatabase,
        renderer: StreamRenderer(urls: MediaURLs(publicBase: configuration.mediaStorage.publicBaseURL.isEmpty ? nil : configuration.mediaStorage.publicBaseURL)),
        logger: logger
    )
    let router = buildRouter(configuration: configuration, dependencies: dependencies, logger: logger, hub: hub)
    let connections = ConnectionLedger()
    return Application(
        router: router,
        server: .guardedHTTP1(deadlines: ConnectionDeadlines(configuration), ledger: connections, record: dependencies.metrics.recordConnectionDeadline),
        // A burst of connections (streams reconnecting after a restart, a flood) waits in the kernel, not refused:
        // the kernel caps the backlog at `net.core.somaxconn` (4096 by default).
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "weatherboard", backlog: 4096),
        services: [
            DatabaseShutdownService(dependencies: dependencies),
            PurgerService(
                purger: dependencies.purger, interval: .seconds(configuration.purgeIntervalSeconds), metrics: dependencies.metrics,
                logger: logger
            ),
            MediaSyncService(media: dependencies.media, interval: .seconds(configuration.mediaSyncSeconds), metrics: dependencies.metrics),
            // Stopped before the pool (services stop in reverse order); each stream ends itself at SIGTERM.
            StreamHubService(hub: hub, conninfo: configuration.databaseURL, heartbeat: .seconds(configuration.streamHeartbeatSeconds), logger: logger),
            ReplicaMonitorService(reads: dependencies.reads),
            MemoryTrimService(ledger: connections, metrics: dependencies.metrics, logger: logger),
        ] + pushServices(dependencies: dependencies, logger: logger),
        onServerRunning: onServerRunning,
        logger: logger
    )
}

func buildRouter(configuration: AppConfiguration, dependencies: AppDependencies, logger: Logger, hub: StreamHub? = nil) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self)
    router.add(middleware: EarlyAnswerMiddleware())
    router.add(
        middleware: RequestEnvelopeMiddleware(
            logger: logger, metrics: dependencies.metrics, maxUploadBodyBytes: configuration.mediaMaxBytes + MultipartUpload.framingAllowanceBytes
        )
    )
    router.add(middleware: InputTextMiddleware())
    let mediaURLs = MediaURLs(publicBase: configuration.mediaStorage.publicBaseURL.isEmpty ? nil : configuration.mediaStorage.publicBaseURL)
    if configuration.mediaStorage.backend == .local {
        // `MEDIA_STORAGE=local`: the public side of MEDIA_DIR under /media/ (only after no route matched).
        router.add(middleware: MediaCacheHeadersMiddleware())
        router.add(middleware: FileMiddleware(configuration.mediaStorage.directory + "/" + MediaFiles.publicPrefix.dropLast(), urlBasePath: "/media", searchForIndexHtml: false, logger: logger))
    }
    router.addRoutes(HealthController(database: dependencies.database).endpoints)
    router.addRoutes(MetricsController(metrics: dependencies.metrics, database: dependencies.database, extra: [AppMetrics.sessionCollector(dependencies.accounts.sessionChecks)] + (hub.map { [$0.collectMetrics] } ?? []) + (dependencies.reads.map { [AppMetrics.replicaCollector($0)] } ?? [])).endpoints)
    router.addRoutes(OpenAPIController(document: OpenAPIController.loadDocument(logger: logger)).endpoints)

    let api = router.group("v1")
        .add(
            middleware: AuthenticationMiddleware(
                accounts: dependencies.accounts, clientAddress: ClientAddress(trustedProxies: configuration.trustedProxies), recordWrites: dependencies.reads != nil
            )
        )
    api.addRoutes(VocabularyController().endpoints)
    api.addRoutes(AccountsController(mediaURLs: mediaURLs, accounts: dependencies.accounts, posts: dependencies.posts).endpoints)
    api.addRoutes(PostsController(mediaURLs: mediaURLs, posts: dependencies.posts, weather: dependencies.weather).endpoints)
    api.addRoutes(FeedController(mediaURLs: mediaURLs, posts: dependencies.posts, regions: dependencies.regions, weather: dependencies.weather).endpoints)
    api.addRoutes(OutfitController(mediaURLs: mediaURLs, posts: dependencies.posts, regions: dependencies.regions, weather: dependencies.weather).endpoints)
    api.addRoutes(ModerationController(mediaURLs: mediaURLs, moderation: dependencies.moderation, posts: dependencies.posts).endpoints)
    api.addRoutes(RepliesController(replies: dependencies.replies, moderation: dependencies.moderation).endpoints)
    api.addRoutes(NotificationsController(notifications: dependencies.notifications).endpoints)
    api.addRoutes(
        MediaController(
            media: dependencies.media, urls: mediaURLs, maxFileBytes: configuration.mediaMaxBytes,
            temporaryDirectory: configuration.uploadTemporaryDirectory, timeLimit: .seconds(configuration.mediaUploadTimeoutSeconds), slots: UploadSlots()
        ).endpoints
    )
    api.addRoutes(ModerationMediaController(media: dependencies.media).endpoints)
    api.addRoutes(RegionsController(regions: dependencies.regions, weather: dependencies.weather).endpoints)
    if let hub { api.addRoutes(StreamController(hub: hub, mediaURLs: mediaURLs).endpoints) }
    return router
}

/// Closes the database pool and the worker threads after the HTTP server has drained
/// (a service group stops its services in reverse order).
struct DatabaseShutdownService: Service {
    let dependencies: AppDependencies

    func run() async throws {
        try? await gracefulShutdown()
        await dependencies.shutdown()
    }
}

/// Samples the standbys' lag for the life of the server (`ReplicaRouter.monitor`); nothing without standbys.
struct ReplicaMonitorService: Service {
    let reads: ReplicaRouter?

    func run() async throws {
        // A service that returns ends the whole group: without standbys, wait for the shutdown like the others.
        guard let reads else { return try await gracefulShutdown() }
        await cancelWhenGracefulShutdown { await reads.monitor() }
    }
}
