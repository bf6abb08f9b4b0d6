import Board
import Database
import FakeAPNs
import Foundation
import Hashing
import Push
import Synchronization
import Testing
import WeatherboardServer

/// The push queue's clock in a test: the wall clock moved by `advance`, never by sleeping.
final class PushTestClock: Sendable {
    private let offset = Mutex<TimeInterval>(0)
    private let pinned = Mutex<Date?>(nil)

    var now: Date { pinned.withLock { $0 } ?? Date().addingTimeInterval(offset.withLock { $0 }) }

    func advance(seconds: TimeInterval) {
        offset.withLock { $0 += seconds }
        pinned.withLock { if let p = $0 { $0 = p.addingTimeInterval(seconds) } }
    }

    /// Stops the clock at `date` (the briefing's DST nights).
    func pin(_ date: Date) { pinned.withLock { $0 = date } }
}

/// A server whose stores queue notifications (CONTRACT §14) in a database of the test's own (the queue is worked by
/// whoever claims it: a shared database would hand one test's notifications to another's worker), a fake APNs over
/// HTTP/2 and TLS with its own certificate authority, and the real `APNsClient` (libcurl) trusting it through its CA
/// file. Nothing is sent in the background: the test drives the worker (`deliver`) and the scheduler (`briefings`).
struct PushHarness: Sendable {
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    static let topic = "kr.weatherboard.app"

    let server: TestServer
    let fake: FakeAPNs
    let client: APNsClient
    let clock: PushTestClock
    let delivery: PushDelivery

    var queue: PushQueue { server.dependencies.push }
    var database: PostgresPool { server.dependencies.database }

    /// Runs worker rounds until one claims nothing; returns how many notifications were claimed.
    @discardableResult
    func deliver() async throws -> Int {
        var total = 0
        while true {
            let n = try await delivery.round()
            total += n
            if n == 0 { return total }
        }
    }

    /// One scheduler tick, as `BriefingService` runs it.
    func briefings() async -> Int {
        await BriefingService.tick(dependencies: server.dependencies, logger: testLogger)
    }

    /// Registers a device for `account` and returns its token.
    @discardableResult
    func device(_ account: TestAccount, timeZone: String = "Asia/Seoul", language: String = "en", environment: String = "sandbox") async throws -> String {
        let token = NotificationSettingsTests.deviceToken()
        let response = try await server.json(
            "PUT", "/v1/accounts/me/devices/\(token)", token: account.token,
            ["environment": environment, "timeZone": timeZone, "language": language, "units": "metric"]
        )
        try #require(response.status == 201, "\(response.status) \(response.text)")
        return token
    }

    /// Another fake APNs, checking provider tokens signed with `privateKeyPEM` (a server process's own key file).
    func fake(verifying privateKeyPEM: String) async throws -> FakeAPNs {
        try await FakeAPNs.start(
            teamID: Self.teamID, keyID: Self.keyID, publicKey: try ES256PublicKey(pem: try ES256Key(pem: privateKeyPEM).publicKeyPEM), topic: Self.topic
        )
    }

    /// Requests the fake saw for device `token`.
    func requests(to token: String) -> [FakeAPNs.Request] { fake.requests.filter { $0.deviceToken == token } }

    /// A queued notification's row: kind, result, attempts.
    func rows(for token: String) async throws -> [(kind: String, result: String?, attempts: Int)] {
        try await database.query("SELECT kind, result, attempts FROM push_queue WHERE device_token = \(token) ORDER BY id").map {
            (try $0.decode(String.self, "kind"), try $0.decode(String?.self, "result"), try $0.decode(Int.self, "attempts"))
        }
    }
}

/// The push suites' database: one copy of the plan template (`TestDatabase.isolated`) for the whole process, kept
/// while the process lives (the next run's first copy drops it). One copy, not one a test: each copy is a
/// `CREATE DATABASE … TEMPLATE` of the migrated template, most of a minute on a small machine.
enum PushDatabase {
    static let url: Task<String, any Error> = Task {
        let (stream, continuation) = AsyncStream<Result<String, any Error>>.makeStream()
        Task {
            do {
                try await TestDatabase.isolated(named: "push") { url in
                    continuation.yield(.success(url))
                    // Held until the process ends.
                    for await _ in AsyncStream<Never>.makeStream().stream {}
                }
            } catch {
                continuation.yield(.failure(error))
            }
        }
        for await result in stream { return try result.get() }
        throw TestFailure("the push database was not made")
    }

    /// One push test at a time: every worker claims whatever is due in the queue, so two tests at once would send each
    /// other's notifications.
    static let turn = TestTurn()
}

/// A lock that async tests take turns with, in the order they asked.
actor TestTurn {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func take() async {
        if !busy {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func give() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}

/// Starts a `PushHarness` for `body` on the push suites' database, its queue emptied first, one test at a time, and
/// stops it after.
func withPushServer<T: Sendable>(
    configure: (inout PushQueue.Policy) -> Void = { _ in }, _ body: @Sendable (PushHarness) async throws -> T
) async throws -> T {
    let url = try await PushDatabase.url.value
    await PushDatabase.turn.take()
    do {
        let value = try await withPushServer(url: url, configure: configure, body)
        await PushDatabase.turn.give()
        return value
    } catch {
        await PushDatabase.turn.give()
        throw error
    }
}

private func withPushServer<T: Sendable>(
    url: String, configure: (inout PushQueue.Policy) -> Void, _ body: @Sendable (PushHarness) async throws -> T
) async throws -> T {
    do {
        let key = ES256Key.generate()
        let fake = try await FakeAPNs.start(
            teamID: PushHarness.teamID, keyID: PushHarness.keyID, publicKey: try ES256PublicKey(pem: key.publicKeyPEM), topic: PushHarness.topic
        )
        let client = try APNsClient(
            configuration: .init(
                teamID: PushHarness.teamID, keyID: PushHarness.keyID, key: key, topic: PushHarness.topic, productionURL: fake.url,
                sandboxURL: fake.url, extraCAFile: fake.caFile, requestTimeout: .seconds(5)
            )
        )
        let clock = PushTestClock()
        var policy = PushQueue.Policy(enabled: true)
        policy.clock = { clock.now }
        configure(&policy)
        let queue = PushQueue(policy: policy)
        let database = PostgresPool(configuration: PostgresConfiguration(conninfo: url, poolSize: 4, statementTimeoutMilliseconds: 20_000))
        // What an earlier test left queued (summaries due later, notifications of a paused environment) is not this one's.
        try await database.execute("TRUNCATE push_queue, push_reply_windows")
        let dependencies = AppDependencies(database: database, hasher: PasswordHasher(threads: 1), rateLimiter: .unlimited, push: queue)
        var options = PushDelivery.Options()
        options.batchSize = 500
        let metrics = dependencies.metrics
        let delivery = PushDelivery(
            queue: queue, database: database, sender: client, options: options, logger: testLogger, observe: metrics.recordPush,
            observeDepth: metrics.recordPushQueueDepth
        )
        do {
            let value = try await withTestServer(configure: { $0.databaseURL = url }, dependencies: dependencies) { server in
                try await body(PushHarness(server: server, fake: fake, client: client, clock: clock, delivery: delivery))
            }
            await client.shutdown()
            try await fake.stop()
            return value
        } catch {
            await client.shutdown()
            try? await fake.stop()
            throw error
        }
    }
}
