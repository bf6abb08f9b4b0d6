import Board
import Database
import Foundation
import RateLimit
import Testing
import Weather
import WeatherboardServer

/// The full bundled catalog, loaded once per test process after the migrations.
enum RegionTestCatalog {
    static let loaded: Task<Void, any Error> = Task {
        try await TestDatabase.migrated.value
        let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: TestDatabase.url, poolSize: 1, statementTimeoutMilliseconds: 0))
        defer { pool.shutdown() }
        _ = try await RegionCatalog.load(file: RegionCatalog.file(inMigrationsDirectory: TestDatabase.sqlDirectory), on: pool, logger: testLogger)
    }
}

/// Records the weather service's events, and lets a test await one.
final class EventLog: @unchecked Sendable {
    // Safety: guarded by `lock`.
    private let lock = NSLock()
    private var events: [WeatherService.Event] = []
    private var watchers: [(condition: @Sendable ([WeatherService.Event]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

    func record(_ event: WeatherService.Event) {
        let ready = lock.withLock {
            events.append(event)
            let all = events
            let (done, waiting) = watchers.reduce(into: ([CheckedContinuation<Void, Never>](), [(condition: @Sendable ([WeatherService.Event]) -> Bool, continuation: CheckedContinuation<Void, Never>)]())) {
                if $1.condition(all) { $0.0.append($1.continuation) } else { $0.1.append($1) }
            }
            watchers = waiting
            return done
        }
        ready.forEach { $0.resume() }
    }

    var all: [WeatherService.Event] { lock.withLock { events } }

    func count(_ event: WeatherService.Event) -> Int { all.filter { $0 == event }.count }

    /// Suspends until the recorded events satisfy `condition`; false if that has not happened within
    /// `seconds` (a guard against hanging the run when something else broke, not a synchronization delay).
    func wait(seconds: Int = 30, until condition: @escaping @Sendable ([WeatherService.Event]) -> Bool) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await self.wait(until: condition)
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            if !first {
                // Release the waiter so the group can finish.
                self.releaseAll()
            }
            return first
        }
    }

    private func releaseAll() {
        let waiting = lock.withLock {
            defer { watchers.removeAll() }
            return watchers.map(\.continuation)
        }
        waiting.forEach { $0.resume() }
    }

    /// Suspends until the recorded events satisfy `condition`.
    private func wait(until condition: @escaping @Sendable ([WeatherService.Event]) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = lock.withLock {
                if condition(events) { return true }
                watchers.append((condition, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// A server whose weather service talks to `fake` through `provider`, on a manual clock.
struct WeatherTestRig: Sendable {
    let clock: ManualClock
    let events: EventLog
    let database: PostgresPool
    let service: WeatherService

    /// Short retry delays, so failure tests are quick; the policy is the production one. The timeouts are long:
    /// an answer the fake is slow to give on a loaded machine must not time out and be retried, or the fake counts
    /// two calls where the test expects one. The one test of timeouts passes `timingOut`.
    static let http = ProviderHTTP(connectTimeoutMilliseconds: 30_000, timeoutMilliseconds: 30_000, retryDelayMilliseconds: 10...30)

    /// For the test of the timeout itself: the fake holds the request (`.gated`) past this.
    static let timingOut = ProviderHTTP(connectTimeoutMilliseconds: 30_000, timeoutMilliseconds: 3000, retryDelayMilliseconds: 10...30)

    static func make(
        provider: String, fake: FakeWeatherAPI, http: ProviderHTTP = WeatherTestRig.http,
        configure: (inout WeatherService.Configuration) -> Void = { _ in },
        budget: ((PostgresPool) -> any UpstreamBudget)? = nil
    ) -> WeatherTestRig {
        let clock = ManualClock()
        let events = EventLog()
        let database = TestDatabase.pool(size: 4)
        let base = provider == "kma" ? fake.baseURL + "/kma" : fake.baseURL
        let upstream = WeatherService.provider(
            named: provider, baseURL: base, openWeatherMapAPIKey: "test-key", kmaServiceKey: "test+key/==", http: http,
            now: { Date(timeIntervalSince1970: 1_795_339_800) }
        )
        var configuration = WeatherService.Configuration(ttlSeconds: 600)
        configure(&configuration)
        let service = WeatherService(
            provider: upstream, regions: RegionStore(database: database), database: database, configuration: configuration,
            logger: testLogger, now: { clock.now }, observer: { events.record($0) }, budget: budget?(database)
        )
        return WeatherTestRig(clock: clock, events: events, database: database, service: service)
    }

    var dependencies: AppDependencies {
        AppDependencies(
            database: database, hasher: PasswordHasher(threads: 1), rateLimiter: .unlimited,
            regions: RegionStore(database: database), weather: service
        )
    }

    /// Forgets what earlier runs stored for these regions in the shared table.
    func forget(_ regionIDs: [Int]) async throws {
        for id in regionIDs {
            try await database.execute("DELETE FROM weather_cache WHERE region_id = \(id)")
        }
    }
}
