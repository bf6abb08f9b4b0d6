import CurlClient
import Database
import Foundation
import ServiceLifecycle
import Testing
import WeatherboardServer

@Suite("Server foundation")
struct FoundationTests {
    @Test("/healthz and /readyz answer ok with a generated X-Request-Id")
    func health() async throws {
        try await withTestServer { server in
            let health = try await server.request("GET", "/healthz")
            #expect(health.status == 200)
            #expect(health.object["status"] as? String == "ok")
            #expect((health.header("x-request-id") ?? "").count >= 16)
            let ready = try await server.request("GET", "/readyz")
            #expect(ready.status == 200)
            #expect(ready.header("content-type")?.hasPrefix("application/json") == true)
        }
    }

    @Test("an unknown path is a JSON 404 that echoes the client's X-Request-Id")
    func notFound() async throws {
        try await withTestServer { server in
            let response = try await server.request("GET", "/v1/no-such-thing", headers: [("X-Request-Id", "client-abc-123")])
            #expect(response.status == 404)
            #expect(response.errorCode == "not_found")
            #expect(response.errorMessage?.isEmpty == false)
            #expect(response.header("x-request-id") == "client-abc-123")
        }
    }

    @Test("a body over 64 KiB is a JSON 413 payload_too_large")
    func payloadTooLarge() async throws {
        try await withTestServer { server in
            let big = [UInt8](repeating: UInt8(ascii: "a"), count: 70 * 1024)
            let response = try await server.request("POST", "/v1/posts", headers: [("X-Request-Id", "big-1")], body: big)
            #expect(response.status == 413)
            #expect(response.errorCode == "payload_too_large")
            #expect(response.header("x-request-id") == "big-1")
        }
    }

    @Test("/metrics exposes request counts by route and status, latency histograms and the pool")
    func metrics() async throws {
        try await withTestServer { server in
            _ = try await server.request("GET", "/readyz")
            _ = try await server.request("GET", "/v1/posts/12345")
            let response = try await server.request("GET", "/metrics")
            #expect(response.status == 200)
            #expect(response.header("content-type")?.hasPrefix("text/plain") == true)
            let text = response.text
            #expect(text.contains(#"http_requests_total{method="GET",route="/readyz",status="200"} 1"#))
            #expect(text.contains(#"route="/v1/posts/{id}",status="404""#))
            #expect(text.contains("http_request_duration_seconds_bucket"))
            #expect(text.contains("db_pool_size 4"))
            #expect(text.contains("db_pool_connections_in_use"))
        }
    }

    @Test("the server serves its OpenAPI document")
    func openAPI() async throws {
        try await withTestServer { server in
            let response = try await server.request("GET", "/openapi.yaml")
            #expect(response.status == 200)
            #expect(response.text.contains("openapi: 3.0.3"))
            #expect(response.text.contains("/v1/"))
        }
    }

    @Test("/healthz still answers while every database connection is stuck, and /readyz says 503")
    func healthWhileDatabaseIsStuck() async throws {
        try await TestDatabase.migrated.value
        let blocker = TestDatabase.pool(size: 1)
        defer { blocker.shutdown() }
        let key = Int.random(in: 1...1_000_000)
        try await blocker.withConnection { _ = try $0.query("SELECT pg_advisory_lock(\(key))") }
        try await withTestServer(configure: {
            $0.dbPoolSize = 2
            $0.dbStatementTimeoutMilliseconds = 120_000  // the stuck queries must stay stuck however slow the machine is
        }) { server in
            let pool = server.dependencies.database
            // Occupy every pool connection with a statement that waits for the lock, plus queued waiters. Each
            // closure signals once it runs on a connection: two signals, and both connections are taken.
            let started = Arrivals()
            let stuck = (0..<6).map { _ in
                Task {
                    try? await pool.withConnection { connection in
                        started.signal()
                        _ = try connection.query("SELECT pg_advisory_xact_lock(\(key))")
                    }
                }
            }
            #expect(await started.wait(for: 2), "two stuck statements should hold both connections")
            for _ in 0..<5 {
                let health = try await server.request("GET", "/healthz", timeoutMilliseconds: 2000)
                #expect(health.status == 200)
            }
            let ready = try await server.request("GET", "/readyz")
            #expect(ready.status == 503)
            #expect(ready.errorCode == "database_unavailable")
            try await blocker.withConnection { _ = try $0.query("SELECT pg_advisory_unlock(\(key))") }
            for task in stuck { _ = await task.value }
        }
    }

    @Test("with the database unreachable, requests get 503 database_unavailable quickly and /healthz stays up")
    func databaseDown() async throws {
        try await withTestServer(configure: { $0.databaseURL = "postgresql://weatherboard@127.0.0.1:1/none" }) { server in
            // /readyz waits at most 1 s for a connection: a request that waited on the dead database instead would
            // reach this client's limit and throw (curl 28), not answer.
            let ready = try await server.request("GET", "/readyz", timeoutMilliseconds: 15_000)
            #expect(ready.status == 503)
            #expect(ready.errorCode == "database_unavailable")
            #expect(try await server.request("GET", "/healthz").status == 200)
        }
    }

    @Test("graceful shutdown lets an in-flight request finish, and the database outlives it")
    func gracefulShutdown() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            // The in-flight request: a weather read held at the (gated) provider. Its answer is then written to
            // weather_cache, so the pool must still work after the shutdown began.
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            // A region no other test asks for: weather_cache is shared, and a fresh row from a test running at the same
            // time would be served without a provider call.
            let gangneung = 1843137
            try await rig.forget([gangneung])
            fake.mode = .gated
            var configuration = AppConfiguration()
            configuration.host = "127.0.0.1"
            configuration.port = 0
            configuration.databaseURL = TestDatabase.url
            configuration.mediaSyncSeconds = 86_400  // as `withTestServer`: another test's media rows are not this server's
            let (ports, portContinuation) = AsyncStream<Int>.makeStream()
            let app = buildApplication(configuration: configuration, dependencies: rig.dependencies, logger: testLogger) { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
            }
            let group = ServiceGroup(configuration: .init(services: [.init(service: app)], logger: testLogger))
            let running = Task { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())

            let inFlight = Task {
                try await sharedClient.send(CurlRequest(url: "http://127.0.0.1:\(port)/v1/regions/\(gangneung)/weather", timeoutMilliseconds: 30_000))
            }
            // The weather service reports the provider call it is making: the request is in its handler.
            let calling = await rig.events.wait { $0.contains(.upstreamCall(regionID: gangneung)) }
            #expect(calling, "the request should reach the provider")
            await group.triggerGracefulShutdown()
            fake.gate.open()
            let response = try await inFlight.value
            #expect(response.status == 200)
            try await running.value
            // After shutdown the server no longer accepts connections.
            await #expect(throws: CurlError.self) {
                try await sharedClient.send(CurlRequest(url: "http://127.0.0.1:\(port)/healthz", timeoutMilliseconds: 2000))
            }
            // The answer reached the table: the pool was shut down only after the drain.
            let check = TestDatabase.pool(size: 1)
            defer { check.shutdown() }
            #expect(try await check.count("SELECT count(*) AS n FROM weather_cache WHERE region_id = \(gangneung)") == 1)
        }
    }
}
