import Board
import CurlClient
import Database
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import Weather
import WeatherboardServer

/// The throwaway database that `deploy/dev test` creates, migrated once per test process.
enum TestDatabase {
    /// The test database's URL, with a `connect_timeout` of 60 s unless it names one: the server's 3 s is for a
    /// production instance, while here many servers open their sessions at once beside the other suites' work (seen
    /// in CI: 'timeout expired' for the one session that loads the region catalog, failing every suite waiting on it).
    static var url: String {
        guard let url = ProcessInfo.processInfo.environment["WEATHERBOARD_TEST_DATABASE_URL"], !url.isEmpty else {
            Issue.record("WEATHERBOARD_TEST_DATABASE_URL is not set: run the tests with `deploy/dev test`")
            return "postgresql://invalid@127.0.0.1:1/none"
        }
        if URLComponents(string: url)?.queryItems?.contains(where: { $0.name == "connect_timeout" }) == true { return url }
        return withParameter("connect_timeout", "60", url)
    }

    static let sqlDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("sql")

    /// Runs the real migrations and loads the region catalog once, as `weatherboard migrate` does, before
    /// any server starts (loading it while tests write posts would make them wait on region row locks).
    static let migrated: Task<Void, any Error> = Task {
        let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: url, poolSize: 1, statementTimeoutMilliseconds: 0))
        defer { pool.shutdown() }
        _ = try await Migrator(directory: sqlDirectory).run(on: pool, logger: testLogger)
        _ = try await RegionCatalog.load(file: RegionCatalog.file(inMigrationsDirectory: sqlDirectory), on: pool, logger: testLogger)
    }

    static func pool(size: Int = 2) -> PostgresPool {
        PostgresPool(configuration: PostgresConfiguration(conninfo: url, poolSize: size))
    }

    /// Runs `body` on one connection of the database at `url` (a plan suite's own copy, `isolated(named:)`) inside a
    /// transaction that is always rolled back. Plan tests load large tables there: the statement limit is `timeout`,
    /// and with `defaultJIT` the session goes back to PostgreSQL's own JIT settings (the server's sessions turn JIT
    /// off; a plan must stay clear of JIT without that).
    static func inRolledBackTransaction<T: Sendable>(
        on url: String, timeout: String, defaultJIT: Bool = false, _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: url, poolSize: 1))
        defer { pool.shutdown() }
        return try await pool.withConnection { connection in
            try connection.simpleQuery("BEGIN")
            defer { try? connection.simpleQuery("ROLLBACK") }
            try connection.simpleQuery("SET LOCAL statement_timeout = '\(timeout)'")
            if defaultJIT {
                try connection.simpleQuery("SET LOCAL jit = on; SET LOCAL jit_above_cost = 100000; SET LOCAL jit_inline_above_cost = 500000")
            }
            return try body(connection)
        }
    }
}

let testLogger: Logger = {
    var logger = Logger(label: "weatherboard.test")
    logger.logLevel = .warning
    return logger
}()

/// A live server on 127.0.0.1 and an ephemeral port, built by the same `buildApplication` as production,
/// and reached through libcurl like any client.
struct TestServer: Sendable {
    let port: Int
    let dependencies: AppDependencies
    let configuration: AppConfiguration
    /// This server's own client address (sent as `X-Forwarded-For` from the trusted loopback proxy), so
    /// per-IP rate limits of one test never spill into another.
    let clientIP = "10.\(UInt8.random(in: 0...255)).\(UInt8.random(in: 0...255)).\(UInt8.random(in: 1...254))"

    init(port: Int, dependencies: AppDependencies, configuration: AppConfiguration) {
        self.port = port
        self.dependencies = dependencies
        self.configuration = configuration
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func request(
        _ method: String,
        _ path: String,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        // Generous: under the whole suite, requests that wait on the 2 hashing threads (login and registration
        // bursts, every registered test account) queue behind many scrypt runs and the burst's own rate-limit row
        // locks. A passing request never waits it out (seen at 60 s: two full suites and a 10M-row bench at once, load
        // 24, a login burst's last requests).
        timeoutMilliseconds: Int = 120_000
    ) async throws -> CurlResponse {
        var headers = headers
        if !headers.contains(where: { $0.0.lowercased() == "x-forwarded-for" }) {
            headers.append(("X-Forwarded-For", clientIP))
        }
        if body != nil, !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
            headers.append(("Content-Type", "application/json"))
        }
        return try await sharedClient.send(
            CurlRequest(method: method, url: baseURL + path, headers: headers, body: body, timeoutMilliseconds: timeoutMilliseconds)
        )
    }

    /// Sends a JSON body, optionally with a bearer token.
    func json(_ method: String, _ path: String, token: String? = nil, headers: [(String, String)] = [], _ body: Any? = nil) async throws -> CurlResponse {
        var headers = headers
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        let bytes = try body.map { [UInt8](try JSONSerialization.data(withJSONObject: $0, options: [.fragmentsAllowed])) }
        return try await request(method, path, headers: headers, body: bytes)
    }
}

let sharedClient = CurlHTTPClient(threads: 16)

extension CurlResponse {
    /// The body as a JSON object (or fails the test).
    var object: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }
    var errorMessage: String? { (object["error"] as? [String: Any])?["message"] as? String }
}

/// Starts a server for the duration of `body`, then shuts it down gracefully.
func withTestServer<T: Sendable>(
    configure: (inout AppConfiguration) -> Void = { _ in },
    dependencies: AppDependencies? = nil,
    _ body: @Sendable (TestServer) async throws -> T
) async throws -> T {
    try await TestDatabase.migrated.value
    var configuration = AppConfiguration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.databaseURL = TestDatabase.url
    configuration.weatherProvider = "none"
    configuration.trustedProxies = ["127.0.0.1"]
    configuration.dbPoolSize = 4  // dozens of servers run at once in the suite
    // The background media sync works on every server's rows in the shared database, with its own store: never
    // within a run (each test drives its own syncs: `syncVisibility`). Every 60 s, a server that lived that long (the
    // failover suite's do) claimed another test's due rows: an S3 test's removal returned before its objects moved
    // (the row was claimed by a file-store server, which then failed to find the file; CI at 23dc9e2).
    configuration.mediaSyncSeconds = 86_400
    configure(&configuration)
    let dependencies = dependencies ?? AppDependencies.make(configuration: configuration, logger: testLogger)
    let (ports, portContinuation) = AsyncStream<Int>.makeStream()
    let app = buildApplication(configuration: configuration, dependencies: dependencies, logger: testLogger) { channel in
        portContinuation.yield(channel.localAddress?.port ?? 0)
        portContinuation.finish()
    }
    let group = ServiceGroup(configuration: .init(services: [.init(service: app)], logger: testLogger))
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            await group.triggerGracefulShutdown()
            throw TestFailure("server did not start")
        }
        let server = TestServer(port: port, dependencies: dependencies, configuration: configuration)
        do {
            let value = try await body(server)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return value
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Client addresses for tests that go through a trusted proxy's `X-Forwarded-For`.
enum TestClient {
    /// One of 16 million private addresses: rate-limit buckets outlive a test (and, on a reused database, a
    /// run), so each test takes addresses no other test is likely to have counted.
    static func randomAddress() -> String {
        "10.\(Int.random(in: 0...255)).\(Int.random(in: 0...255)).\(Int.random(in: 1...254))"
    }
}

/// A transaction of the test's own that holds its row locks until the test opens a gate, so a race with the
/// server's own transactions can be staged in a fixed order: the gated transaction locks first, the server's
/// request waits on it (`waitForLockWaiter`), then `open()` commits it and the request goes on.
struct GatedTransaction: Sendable {
    let gate: Int64
    let gatePool: PostgresPool
    let transactionPool: PostgresPool
    /// The transaction's backend: what a waiter of this race waits behind.
    let backendPID: Int
    let committed: Task<Void, any Error>

    /// The application name of the gated transaction's sessions, in `pg_stat_activity`.
    static let applicationName = "weatherboard-test-gate"

    /// Runs `statements` in a transaction that then waits for the gate; returns once they have run, so their locks
    /// are held. The transaction has connections of its own; `database` (the server's pool) is not used.
    static func start(_ statements: [SQLQuery], on database: PostgresPool) async throws -> GatedTransaction {
        let gate = Int64.random(in: 1...Int64.max)
        let conninfo = TestDatabase.withApplicationName(applicationName, TestDatabase.url)
        // No statement timeout: the gated transaction waits as long as the test takes to open the gate.
        let gatePool = PostgresPool(configuration: PostgresConfiguration(conninfo: conninfo, poolSize: 1, statementTimeoutMilliseconds: 0))
        let transactionPool = PostgresPool(configuration: PostgresConfiguration(conninfo: conninfo, poolSize: 1, statementTimeoutMilliseconds: 0))
        try await gatePool.withConnection { _ = try $0.query("SELECT pg_advisory_lock(\(gate))") }
        // The pool's one session runs the transaction below.
        let backendPID = try await transactionPool.withConnection { try $0.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid") }
        // Signalled once the statements have run (their locks are held) and the transaction goes to its gate.
        let locked = Arrivals()
        let committed = Task {
            try await transactionPool.transaction { connection in
                for statement in statements { _ = try connection.query(statement) }
                locked.signal()
                _ = try connection.query("SELECT pg_advisory_xact_lock(\(raw: String(gate))) AS gate")
            }
        }
        let gated = GatedTransaction(gate: gate, gatePool: gatePool, transactionPool: transactionPool, backendPID: backendPID, committed: committed)
        guard await locked.wait(for: 1) else {
            try await gated.open()
            throw TestFailure("the gated transaction never ran its statements")
        }
        return gated
    }

    /// Opens the gate, waits for the commit and ends the helper's connections.
    func open() async throws {
        try await gatePool.withConnection { _ = try $0.query("SELECT pg_advisory_unlock(\(gate))") }
        defer {
            gatePool.shutdown()
            transactionPool.shutdown()
        }
        try await committed.value
    }
}

extension GatedTransaction {
    /// An account deletion as the server makes one (the account row locked, then marked deleted and its sessions
    /// removed), held open until `open()`.
    static func accountDeletion(_ accountID: Int, on database: PostgresPool) async throws -> GatedTransaction {
        try await start(
            [
                "SELECT id FROM accounts WHERE id = \(accountID) FOR UPDATE",
                "UPDATE accounts SET username = NULL, password_hash = NULL, deleted_at = now() WHERE id = \(accountID)",
                "DELETE FROM sessions WHERE account_id = \(accountID)",
            ],
            on: database
        )
    }
}

extension PostgresPool {
    /// The `n` of a `SELECT count(*) AS n …`: what a test asserts about stored state.
    func count(_ query: SQLQuery) async throws -> Int {
        try await self.query(query)[0].decode(Int.self, "n")
    }
}

/// True once a backend of the test database whose statement matches `pattern` (SQL `LIKE`) waits on a lock that
/// `gate`'s transaction holds; false after 30 s (a test may fail, never hang). Only the race this test staged counts:
/// another suite's statement of the same text, waiting on another suite's lock, never does. The wait takes a
/// connection of its own, so it never holds one the server needs.
///
/// PostgreSQL announces no lock wait: the one place to see it is `pg_stat_activity`. So a single statement waits
/// for it inside PostgreSQL, reading that view afresh every `lockWaiterProbeMilliseconds` (`pg_sleep` in between)
/// until a waiter shows up; the test's task stays suspended on that statement, neither spinning nor sleeping.
func waitForLockWaiter(_ pattern: String, behind gate: GatedTransaction) async throws -> Bool {
    let conninfo = TestDatabase.withApplicationName("weatherboard-test-probe", TestDatabase.url)
    let probe = PostgresPool(configuration: PostgresConfiguration(conninfo: conninfo, poolSize: 1, statementTimeoutMilliseconds: 0))
    defer { probe.shutdown() }
    let literal = "'" + pattern.replacingOccurrences(of: "'", with: "''") + "'"
    let rounds = 30_000 / lockWaiterProbeMilliseconds
    let seconds = Double(lockWaiterProbeMilliseconds) / 1000
    do {
        try await probe.withConnection { connection in
            _ = try connection.query(
                """
                DO $wait$ BEGIN
                  FOR round IN 1..\(raw: String(rounds)) LOOP
                    PERFORM pg_stat_clear_snapshot();
                    IF EXISTS (
                      SELECT 1 FROM pg_stat_activity
                      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE \(raw: literal)
                        AND \(raw: String(gate.backendPID)) = ANY (pg_blocking_pids(pid))
                    ) THEN RETURN; END IF;
                    PERFORM pg_sleep(\(raw: String(seconds)));
                  END LOOP;
                  RAISE EXCEPTION 'no lock waiter';
                END $wait$
                """
            )
        }
        return true
    } catch let error as PostgresError where error.sqlState == "P0001" {  // the RAISE: no waiter in 30 s
        return false
    }
}

/// How often `waitForLockWaiter`'s statement reads `pg_stat_activity` again.
let lockWaiterProbeMilliseconds = 5

/// Counts events signalled from any thread (a pool thread, a handler) and lets a test await a count: how a test
/// knows something has happened without polling for it.
final class Arrivals: Sendable {
    private struct State {
        var count = 0
        var waiters: [(count: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    private let state = Mutex(State())

    func signal() {
        let ready = state.withLock { state in
            state.count += 1
            let count = state.count
            var ready: [CheckedContinuation<Bool, Never>] = []
            state.waiters.removeAll { waiter in
                guard waiter.count <= count else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return ready
        }
        ready.forEach { $0.resume(returning: true) }
    }

    /// Suspends until `count` signals have arrived: true; false if they have not within `seconds` (a guard
    /// against hanging the run when something else broke, not a synchronization delay).
    func wait(for count: Int, seconds: Int = 30) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    let now = self.state.withLock { state in
                        if state.count >= count { return true }
                        state.waiters.append((count, continuation))
                        return false
                    }
                    if now { continuation.resume(returning: true) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            if !first {
                // Release the waiter so the group can finish.
                let waiting = state.withLock { state in
                    defer { state.waiters.removeAll() }
                    return state.waiters.map(\.continuation)
                }
                waiting.forEach { $0.resume(returning: false) }
            }
            return first
        }
    }
}
