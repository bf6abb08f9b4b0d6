import Board
import Database
import Foundation
import Logging
import ServiceLifecycle
import Vocabulary
import Weather
import WeatherboardAPI

/// The daily briefing (CONTRACT §14): every `interval`, queues the briefing of each device whose chosen local minute
/// came (`PushQueue.dueBriefings`), in batches. The morning burst costs a region's work once, not a device's: a tick
/// looks up each region's weather once (the weather service's cache and §6's budgets behind it), reads each region's
/// posts once, and renders each payload once per (region, language, units); every device of a group gets the same
/// bytes. No weather: the briefing still goes, once, with `currentWeather: null`.
public struct BriefingService: Service {
    let queue: PushQueue
    let database: PostgresPool
    let weather: any WeatherProviding
    let regions: RegionStore
    let posts: PostService
    let interval: Duration
    let batchSize: Int
    let logger: Logger

    init(
        queue: PushQueue, database: PostgresPool, weather: any WeatherProviding, regions: RegionStore, posts: PostService, interval: Duration,
        batchSize: Int, logger: Logger
    ) {
        self.queue = queue
        self.database = database
        self.weather = weather
        self.regions = regions
        self.posts = posts
        self.interval = interval
        self.batchSize = batchSize
        self.logger = logger
    }

    /// The scheduler of `dependencies`' queue.
    init(dependencies: AppDependencies, interval: Duration = .seconds(5), batchSize: Int = 5000, logger: Logger) {
        self.init(
            queue: dependencies.push, database: dependencies.database, weather: dependencies.weather, regions: dependencies.regions,
            posts: dependencies.posts, interval: interval, batchSize: batchSize, logger: logger
        )
    }

    /// One tick of `dependencies`' scheduler (tests drive the scheduler by its clock, not by waiting for its interval).
    public static func tick(dependencies: AppDependencies, logger: Logger) async -> Int {
        await BriefingService(dependencies: dependencies, logger: logger).tick()
    }

    public func run() async throws {
        await repeatUntilShutdown(every: interval) { await tick() }
    }

    /// Queues every briefing due now. Returns how many were queued.
    @discardableResult
    func tick() async -> Int {
        var renderer = BriefingRenderer(weather: weather, regions: regions, posts: posts)
        var queued = 0
        do {
            while !Task.isCancelled {
                let due = try await queue.dueBriefings(limit: batchSize, on: database)
                if due.isEmpty { break }
                await renderer.prepare(regionIDs: Set(due.map(\.regionID)))
                var rendered: [(PushQueue.DueBriefing, payload: [UInt8])] = []
                rendered.reserveCapacity(due.count)
                for device in due {
                    rendered.append((device, await renderer.payload(regionID: device.regionID, language: device.language, units: device.units)))
                }
                queued += try await queue.queueBriefings(rendered, on: database)
                if due.count < batchSize { break }
            }
        } catch {
            logger.warning("briefing tick failed", metadata: ["error": "\(error)"])
        }
        if queued > 0 { logger.info("briefings queued", metadata: ["count": "\(queued)", "upstreamRegions": "\(renderer.regionsLookedUp)"]) }
        return queued
    }
}

/// One tick's briefings: each region's weather and posts looked up once, each payload rendered once per (region,
/// language, units).
struct BriefingRenderer {
    let weather: any WeatherProviding
    let regions: RegionStore
    let posts: PostService
    /// The region's weather (nil: could not be had) and its names, by region.
    private var outside: [Int: (metric: WeatherOutside?, region: Region?)] = [:]
    private var topPosts: [Int: [BriefingPushPayload.PostLink]] = [:]
    private var payloads: [String: [UInt8]] = [:]

    init(weather: any WeatherProviding, regions: RegionStore, posts: PostService) {
        self.weather = weather
        self.regions = regions
        self.posts = posts
    }

    var regionsLookedUp: Int { outside.count }

    /// The most regions looked up at once: each is one upstream call at most (§6's budgets still apply) and one posts read.
    static let lookupsAtOnce = 16

    /// Looks up the weather, names and posts of each region not looked up yet this tick, `lookupsAtOnce` at a time.
    mutating func prepare(regionIDs: Set<Int>) async {
        let missing = regionIDs.filter { outside[$0] == nil }
        guard !missing.isEmpty else { return }
        let (weather, regions, posts) = (self.weather, self.regions, self.posts)
        typealias Found = (id: Int, metric: WeatherOutside?, region: Region?, posts: [BriefingPushPayload.PostLink])
        let found = await withTaskGroup(of: Found.self) { group in
            var all: [Found] = []
            var pending = missing.makeIterator()
            func add(_ id: Int) {
                group.addTask { await Self.lookUp(id, weather: weather, regions: regions, posts: posts) }
            }
            for _ in 0..<Self.lookupsAtOnce { if let id = pending.next() { add(id) } }
            for await one in group {
                all.append(one)
                if let id = pending.next() { add(id) }
            }
            return all
        }
        for one in found {
            outside[one.id] = (one.metric, one.region)
            topPosts[one.id] = one.posts
        }
    }

    /// One region's weather (metric, English: the cached observation), its names, and the first 3 posts of its feed.
    static func lookUp(
        _ regionID: Int, weather: any WeatherProviding, regions: RegionStore, posts: PostService
    ) async -> (id: Int, metric: WeatherOutside?, region: Region?, posts: [BriefingPushPayload.PostLink]) {
        let found = try? await weather.outside(regionID: regionID, units: .metric, language: .en, requester: .server)
        let region = try? await regions.region(id: regionID)
        var links: [BriefingPushPayload.PostLink] = []
        if let found, found.current.weatherType != .unknown {
            var query = PostQuery(weatherType: found.current.weatherType, regionID: nil, before: nil, limit: 3)
            query.sort = .fit
            query.fitBand = found.band
            if let page = try? await posts.list(query, viewer: Viewer.anonymous) {
                links = page.posts.prefix(3).map { .init(id: $0.id, title: $0.title) }
            }
        }
        return (regionID, found, region, links)
    }

    /// The payload of a briefing of region `regionID` in `language` and `units` (`prepare` looked the region up).
    mutating func payload(regionID: Int, language: Language, units: Units) async -> [UInt8] {
        let key = "\(regionID)/\(language.rawValue)/\(units.rawValue)"
        if let done = payloads[key] { return done }
        if outside[regionID] == nil { await prepare(regionIDs: [regionID]) }
        let (metric, region) = outside[regionID] ?? (nil, nil)
        // The same observation in the device's units and language (the service converts and names; no second lookup).
        var current: WeatherOutside? = metric
        if metric != nil, units != .metric || language != .en {
            current = (try? await weather.outside(regionID: regionID, units: units, language: language, requester: .server)) ?? metric
        }
        var payload = BriefingPushPayload(
            regionID: regionID, regionName: region?.name(in: language) ?? "", language: language, current: current?.current, band: current?.band,
            carry: current.map { CarryItem.items(weatherType: $0.current.weatherType, uvIndex: $0.current.uvIndex, band: $0.band) } ?? [],
            posts: topPosts[regionID] ?? []
        )
        var bytes = payload.json()
        // APNs takes 4 KB: long titles give way first.
        while bytes.count > 4096, !payload.posts.isEmpty {
            payload.posts.removeLast()
            bytes = payload.json()
        }
        payloads[key] = bytes
        return bytes
    }
}
