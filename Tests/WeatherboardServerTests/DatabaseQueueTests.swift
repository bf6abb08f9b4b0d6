@testable import Database
import Foundation
import Testing
import WeatherboardServer

/// `DB_QUEUE_MAX` over HTTP: a full connection queue answers at once, as the database being unavailable.
@Suite("Database queue bound")
struct DatabaseQueueTests {
    @Test("past DB_QUEUE_MAX waiting jobs a request answers 503 database_unavailable with Retry-After at once")
    func fullQueueAnswers503() async throws {
        let blocker = TestDatabase.pool(size: 1)
        defer { blocker.shutdown() }
        let key = Int.random(in: 1...1_000_000)
        _ = try await blocker.query("SELECT pg_advisory_lock(\(key))")
        try await withTestServer(configure: {
            $0.dbPoolSize = 1
            $0.dbQueueMax = 1
            // Without the bound, the request would wait this long for a connection: far past the client's limit below.
            $0.dbStatementTimeoutMilliseconds = 120_000
        }) { server in
            let pool = server.dependencies.database
            // The only connection waits for the test's lock; one job waits behind it: the queue is full.
            let (started, signal) = AsyncStream<Void>.makeStream()
            let held = Task {
                try await pool.withConnection { connection in
                    signal.yield()
                    _ = try connection.query("SELECT pg_advisory_xact_lock(\(key))")
                }
            }
            var iterator = started.makeAsyncIterator()
            _ = await iterator.next()
            let queued = Task { try await pool.query("SELECT 1 AS one") }
            let full = await withTaskGroup(of: Bool.self) { group in
                group.addTask { await pool.queue.waitUntil { $0.waiting == 1 } }
                group.addTask {
                    try? await Task.sleep(for: .seconds(30))  // bounded: a test may fail, never hang
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            #expect(full)

            let response = try await server.request("GET", "/v1/posts?limit=20", timeoutMilliseconds: 10_000)
            #expect(response.status == 503)
            #expect(response.errorCode == "database_unavailable")
            #expect(response.header("Retry-After") == "1")
            #expect(pool.errorCounts["queue_full"] ?? 0 >= 1)
            // Answered while the connection is still held: nothing waited for it.
            #expect(pool.usage.inUse == 1)

            _ = try await blocker.query("SELECT pg_advisory_unlock(\(key))")
            _ = try await held.value
            _ = try await queued.value
            #expect(try await server.request("GET", "/v1/posts?limit=20").status == 200)
        }
    }

    @Test("DB_QUEUE_MAX is read from the environment and checked")
    func configuration() throws {
        #expect(try AppConfiguration(environment: [:]).dbQueueMax == 1000)
        #expect(try AppConfiguration(environment: ["DB_QUEUE_MAX": "64"]).dbQueueMax == 64)
        #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: ["DB_QUEUE_MAX": "0"]) }
    }
}
