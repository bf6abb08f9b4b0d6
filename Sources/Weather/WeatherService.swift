import Database
import Foundation
import Logging
import Vocabulary

/// Current weather per region, for every caller of the process:
/// - an in-process cache in front of the `weather_cache` table, which every server instance shares and which
///   survives restarts; entries are fresh for `ttl`;
/// - single flight: concurrent requests for one region that is not fresh wait for one refresh, so they make
///   exactly one upstream call;
/// - stale-if-error: when the provider fails, the last value (memory or table) is served with `stale: true`
///   and the provider is not asked again for that region for `failureBackoff`; with nothing cached the call
///   throws `WeatherError.unavailable`;
/// - a circuit breaker that stops calling a provider which keeps failing, for `breakerCooldown`; a provider that
///   answers 429 (or 503 with `Retry-After`) is not called again, for any region, for the time it asked
///   (`breakerCooldown` when it did not say), at most `maxProviderHold`;
/// - an upstream budget (`UpstreamBudget`): each call about to go out is admitted first, per client address and
///   deployment-wide; past the client's limit the request throws `WeatherError.rateLimited`, past the deployment's
///   it is answered like a provider failure (stale value, or `unavailable` with a `Retry-After`);
/// - every answer, and every row read back from the table, is checked by `Plausible` first: an implausible one is
///   a provider failure (or an absent row), never used, cached or shown.
public actor WeatherService: WeatherProviding {
    public struct Configuration: Sendable {
        public var ttl: TimeInterval = 600
        public var failureBackoff: TimeInterval = 30
        public var breakerThreshold: Int = 5
        public var breakerCooldown: TimeInterval = 30
        /// The longest a provider's `Retry-After` holds every call back (a provider asking for a day is asked again
        /// after this, by one trial call).
        public var maxProviderHold: TimeInterval = 600

        public init(ttlSeconds: Int = 600) {
            self.ttl = TimeInterval(ttlSeconds)
            self.failureBackoff = min(30, TimeInterval(ttlSeconds))
        }
    }

    /// What happened for a request, for metrics and tests.
    public enum Event: Sendable, Equatable {
        case memoryHit(regionID: Int)
        case joinedInFlight(regionID: Int)
        case databaseHit(regionID: Int)
        case upstreamCall(regionID: Int)
        case upstreamFailure(regionID: Int)
        case servedStale(regionID: Int)
        case circuitOpen(regionID: Int)
        /// The requester's per-client limit refused the upstream call this request needed.
        case clientLimited(regionID: Int)
        /// The deployment's upstream budget refused the call.
        case budgetExhausted(regionID: Int)
    }

    private struct Flight {
        var task: Task<CachedObservation, any Error>
        var requester: WeatherRequester
    }

    private struct Entry {
        var value: CachedObservation
        /// Set when `value` is served stale after a failure: do not ask the provider again before this.
        var retryAt: Date?
    }

    public nonisolated let provider: (any WeatherProvider)?
    public nonisolated let configuration: Configuration
    private let regions: any RegionProviding
    private let database: PostgresPool
    private let now: @Sendable () -> Date
    private let observer: (@Sendable (Event) -> Void)?
    private let logger: Logger
    private let budget: (any UpstreamBudget)?

    private var memory: [Int: Entry] = [:]
    private var inFlight: [Int: Flight] = [:]
    private var knownRegions: [Int: Region] = [:]
    private var breaker: CircuitBreaker

    /// `provider` nil is `WEATHER_PROVIDER=none`: weather is always unavailable. `budget` nil: upstream calls are
    /// not limited (tests that are not about the budget).
    public init(
        provider: (any WeatherProvider)?,
        regions: any RegionProviding,
        database: PostgresPool,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "weatherboard.weather"),
        now: @escaping @Sendable () -> Date = { Date() },
        observer: (@Sendable (Event) -> Void)? = nil,
        budget: (any UpstreamBudget)? = nil
    ) {
        self.budget = budget
        self.provider = provider
        self.regions = regions
        self.database = database
        self.configuration = configuration
        self.logger = logger
        self.now = now
        self.observer = observer
        self.breaker = CircuitBreaker(threshold: configuration.breakerThreshold, cooldown: configuration.breakerCooldown)
    }

    public func currentWeather(regionID: Int, units: Units, language: Language, requester: WeatherRequester) async throws -> CurrentWeather {
        try await observation(regionID: regionID, requester: requester).currentWeather(units: units, language: language)
    }

    /// The cached observation (metric), refreshing it if needed.
    public func observation(regionID: Int, requester: WeatherRequester = .server) async throws -> CachedObservation {
        // A refresh started by another client that its own limit refused says nothing about this request: it then
        // tries on its own (each refused flight is skipped once, so this ends).
        var refused: Task<CachedObservation, any Error>?
        while true {
            if let entry = memory[regionID], isServable(entry, at: now()) {
                observer?(.memoryHit(regionID: regionID))
                return entry.value
            }
            if let flight = inFlight[regionID], flight.task != refused {
                observer?(.joinedInFlight(regionID: regionID))
                do {
                    return try await flight.task.value
                } catch WeatherError.rateLimited(let seconds) {
                    guard flight.requester.clientAddress != requester.clientAddress else { throw WeatherError.rateLimited(retryAfterSeconds: seconds) }
                    refused = flight.task
                    continue
                }
            }
            let task = Task { try await self.refresh(regionID: regionID, requester: requester) }
            inFlight[regionID] = Flight(task: task, requester: requester)
            let result = await task.result
            if inFlight[regionID]?.task == task { inFlight[regionID] = nil }
            return try result.get()
        }
    }

    /// True while the circuit breaker refuses calls.
    public var isCircuitOpen: Bool { breaker.isOpen }

    private func isServable(_ entry: Entry, at now: Date) -> Bool {
        if let retryAt = entry.retryAt { return now < retryAt }
        return now.timeIntervalSince(entry.value.fetchedAt) < configuration.ttl
    }

    private func refresh(regionID: Int, requester: WeatherRequester) async throws -> CachedObservation {
        let region = try await lookUp(regionID)
        guard let provider else { throw WeatherError.unavailable("no weather provider is configured") }

        // Another instance (or this one before a restart) may have fetched it.
        var persisted: CachedObservation?
        do {
            persisted = try await loadPersisted(regionID: regionID, provider: provider.name)
        } catch {
            logger.warning("weather cache read failed", metadata: ["region": "\(regionID)", "error": "\(error)"])
        }
        if let persisted, now().timeIntervalSince(persisted.fetchedAt) < configuration.ttl {
            observer?(.databaseHit(regionID: regionID))
            memory[regionID] = Entry(value: persisted, retryAt: nil)
            return persisted
        }

        guard breaker.allowsRequest(now: now()) else {
            observer?(.circuitOpen(regionID: regionID))
            return try fallback(
                regionID: regionID, persisted: persisted, reason: "the weather provider is failing; retrying shortly",
                retryAfterSeconds: breaker.secondsUntilTrial(now: now())
            )
        }
        if let budget {
            do {
                try await budget.admit(requester, requests: provider.requestsPerObservation)
            } catch UpstreamRefusal.clientLimit(let seconds) {
                breaker.callNotMade()
                observer?(.clientLimited(regionID: regionID))
                throw WeatherError.rateLimited(retryAfterSeconds: seconds)
            } catch UpstreamRefusal.deploymentBudget(let seconds) {
                breaker.callNotMade()
                observer?(.budgetExhausted(regionID: regionID))
                return try fallback(
                    regionID: regionID, persisted: persisted, reason: "the weather provider budget is spent; try again in \(seconds) s",
                    retryAfterSeconds: seconds
                )
            } catch {
                breaker.callNotMade()
                logger.warning("weather upstream budget check failed", metadata: ["region": "\(regionID)", "error": "\(error)"])
                return try fallback(regionID: regionID, persisted: persisted, reason: "the weather provider budget could not be checked")
            }
        }
        observer?(.upstreamCall(regionID: regionID))
        let observation: Observation
        do {
            let answer = try await Self.observe(region, provider: provider, budget: budget)
            // Outside data: an implausible answer is a provider failure like any other (CONTRACT §6).
            observation = try Plausible.check(answer, now: now(), source: provider.name, maxAge: Plausible.maxObservationAge)
        } catch {
            var retryAfterSeconds: Int?
            if let error = error as? ProviderError, error.kind == .unsupportedRegion {
                breaker.recordSuccess()
            } else if let error = error as? ProviderError, error.kind == .throttled {
                let hold = min(max(1, error.retryAfterSeconds ?? configuration.breakerCooldown), configuration.maxProviderHold)
                breaker.hold(until: now().addingTimeInterval(hold))
                retryAfterSeconds = Int(hold.rounded(.up))
            } else {
                breaker.recordFailure(now: now())
            }
            observer?(.upstreamFailure(regionID: regionID))
            logger.warning("weather provider failed", metadata: ["provider": "\(provider.name)", "region": "\(regionID)", "error": "\(error)"])
            return try fallback(regionID: regionID, persisted: persisted, reason: "the weather provider failed", retryAfterSeconds: retryAfterSeconds)
        }
        breaker.recordSuccess()
        let fresh = CachedObservation(regionID: regionID, provider: provider.name, observation: observation, fetchedAt: now())
        memory[regionID] = Entry(value: fresh, retryAt: nil)
        do {
            try await persist(fresh)
        } catch {
            logger.warning("weather cache write failed", metadata: ["region": "\(regionID)", "error": "\(error)"])
        }
        return fresh
    }

    /// The provider's answer, with the budget's admission for a retry the provider may make (one more upstream request).
    private static func observe(_ region: Region, provider: any WeatherProvider, budget: (any UpstreamBudget)?) async throws -> Observation {
        guard let budget else { return try await provider.observe(region, admitRetry: nil) }
        return try await provider.observe(region, admitRetry: { try await budget.admitRetry() })
    }

    /// The last known value, marked stale, or `unavailable`.
    private func fallback(regionID: Int, persisted: CachedObservation?, reason: String, retryAfterSeconds: Int? = nil) throws -> CachedObservation {
        let candidates = [memory[regionID]?.value, persisted].compactMap { $0 }
        guard var last = candidates.max(by: { $0.fetchedAt < $1.fetchedAt }) else {
            throw WeatherError.unavailable(reason, retryAfterSeconds: retryAfterSeconds)
        }
        last.stale = true
        memory[regionID] = Entry(value: last, retryAt: now().addingTimeInterval(configuration.failureBackoff))
        observer?(.servedStale(regionID: regionID))
        return last
    }

    private func lookUp(_ regionID: Int) async throws -> Region {
        if let region = knownRegions[regionID] { return region }
        guard let region = try await regions.region(id: regionID) else { throw WeatherError.unknownRegion(regionID) }
        knownRegions[regionID] = region
        return region
    }

    // MARK: The shared table

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    /// The table's row for the region, when it is believable. A row is outside data too (another instance, an
    /// older version, a hand edit): one that does not decode, or whose values or times `Plausible` refuses, is
    /// ignored (logged) and deleted — only that very row, in case another instance has just replaced it — so the
    /// next good value takes its place.
    private func loadPersisted(regionID: Int, provider: String) async throws -> CachedObservation? {
        let rows = try await database.query(
            """
            SELECT observation::text AS observation,
                   CASE WHEN isfinite(fetched_at) THEN extract(epoch FROM fetched_at)::float8 END AS fetched_at
            FROM weather_cache WHERE region_id = \(regionID) AND provider = \(provider)
            """
        )
        guard let row = rows.first else { return nil }
        let json = try row.decode(String.self, "observation")
        let seconds = try row.decode(Double?.self, "fetched_at")
        do {
            let observation = try Self.decoder.decode(Observation.self, from: Data(json.utf8))
            let fetchedAt = Date(timeIntervalSince1970: seconds ?? -.infinity)
            let now = now()
            try Plausible.time(fetchedAt, now: now, source: "weather_cache", field: "fetched_at", ahead: Plausible.maxClockSkew)
            try Plausible.check(observation, now: now, source: "weather_cache")
            return CachedObservation(regionID: regionID, provider: provider, observation: observation, fetchedAt: fetchedAt)
        } catch {
            logger.warning("ignoring an implausible weather_cache row", metadata: ["region": "\(regionID)", "error": "\(error)"])
            try await database.execute(
                """
                DELETE FROM weather_cache
                WHERE region_id = \(regionID) AND provider = \(provider) AND observation = \(json)::jsonb
                  AND (NOT isfinite(fetched_at) OR extract(epoch FROM fetched_at)::float8 = \(seconds ?? 0))
                """
            )
            return nil
        }
    }

    private func persist(_ value: CachedObservation) async throws {
        let json = String(decoding: try Self.encoder.encode(value.observation), as: UTF8.self)
        try await database.execute("""
            INSERT INTO weather_cache (region_id, provider, observation, fetched_at)
            VALUES (\(value.regionID), \(value.provider), \(json)::jsonb, \(value.fetchedAt))
            ON CONFLICT (region_id, provider) DO UPDATE SET observation = excluded.observation, fetched_at = excluded.fetched_at
            WHERE weather_cache.fetched_at < excluded.fetched_at
            """)
    }
}

extension WeatherService {
    /// The provider `WEATHER_PROVIDER` names (`open-meteo`, `openweathermap`, `kma`; nil for `none`).
    public static func provider(
        named name: String,
        baseURL: String?,
        openWeatherMapAPIKey: String?,
        kmaServiceKey: String?,
        http: ProviderHTTP = ProviderHTTP(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) -> (any WeatherProvider)? {
        switch name {
        case "open-meteo": return OpenMeteoProvider(baseURL: baseURL, http: http)
        case "openweathermap": return OpenWeatherMapProvider(apiKey: openWeatherMapAPIKey ?? "", baseURL: baseURL, http: http)
        case "kma": return KMAProvider(serviceKey: kmaServiceKey ?? "", baseURL: baseURL, http: http, now: now)
        default: return nil
        }
    }
}
