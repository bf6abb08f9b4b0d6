import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import WeatherboardServer

/// Collects every log line a server writes, for assertions.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var text: String { lines.withLock { $0.joined(separator: "\n") } }

    struct Handler: LogHandler {
        let capture: LogCapture
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            var all = metadata
            event.metadata?.forEach { all[$0] = $1 }
            capture.append("\(event.level) \(event.message) " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        }
    }
}

@Suite("Logging")
struct LoggingTests {
    @Test("one line per request with method, path, status, duration and request id; no token or password, ever")
    func requestLinesWithoutSecrets() async throws {
        try await TestDatabase.migrated.value
        let capture = LogCapture()
        var logger = Logger(label: "capture") { _ in LogCapture.Handler(capture: capture) }
        logger.logLevel = .trace
        var configuration = AppConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.databaseURL = TestDatabase.url
        configuration.mediaSyncSeconds = 86_400  // as `withTestServer`: another test's media rows are not this server's
        let dependencies = AppDependencies.make(configuration: configuration, logger: logger)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = buildApplication(configuration: configuration, dependencies: dependencies, logger: logger) { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
        }
        let group = ServiceGroup(configuration: .init(services: [.init(service: app)], logger: testLogger))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let server = TestServer(port: port, dependencies: dependencies, configuration: configuration)

        let anonymous = try await server.anonymousAccount()
        let password = "secret passphrase \(UInt32.random(in: 0...UInt32.max))"
        let username = "logtest_\(UInt32.random(in: 0...UInt32.max))"
        let registered = try await server.json("POST", "/v1/accounts/me/credentials", token: anonymous.token, ["username": username, "password": password])
        let token = try #require(registered.object["token"] as? String)
        _ = try await server.json("POST", "/v1/sessions", headers: [("X-Request-Id", "log-check-1")], ["username": username, "password": password])
        _ = try await server.json("POST", "/v1/sessions", ["username": username, "password": "wrong " + password])
        _ = try await server.json("GET", "/v1/accounts/me", token: token + "x")
        await group.triggerGracefulShutdown()
        try await running.value

        let text = capture.text
        #expect(text.contains("request_id=log-check-1"))
        #expect(text.contains("path=/v1/sessions"))
        #expect(text.contains("status=201"))
        #expect(text.contains("duration_ms"))
        for secret in [password, token, anonymous.token, String(token.dropFirst(3)), "Bearer"] {
            #expect(!text.contains(secret), "the logs contain a secret")
        }
    }
}
