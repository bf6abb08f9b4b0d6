import Board
import Database
import Foundation
import RateLimit
import Synchronization
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
final class EventLog: Sendable {
    typealias Watcher = (condition: @Sendable ([WeatherService.Event]) -> Bool, continuation: CheckedContinuation<Void, Never>)

    private struct State {
        var events: [WeatherService.Event] = []
        var watchers: [Watcher] = []
    }

    private let state = Mutex(State())

    func record(_ event: WeatherService.Event) {
        let ready = state.withLock { state in
            state.events.append(event)
            let all = state.events
            var done: [CheckedContinuation<Void, Never>] = []
            state.watchers.removeAll { watcher in
                guard watcher.condition(all) else { return false }
                done.append(watcher.continuation)
                return true
            }
            return done
        }
        ready.forEach { $0.resume() }
    }

    var all: [WeatherService.Event] { state.withLock { $0.events } }

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
        let waiting = state.withLock { state in
            defer { state.watchers.removeAll() }
            return state.watchers.map(\.continuation)
        }
        waiting.forEach { $0.resume() }
    }

    /// Suspends until the recorded events satisfy `condition`.
    private func wait(until condition: @escaping @Sendable ([WeatherService.Event]) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if condition(state.events) { return true }
                state.watchers.append((condition, continuation))
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
