import Foundation
import Hummingbird
import ServiceLifecycle
import Testing
import WeatherboardServer

#if canImport(Glibc)
import Glibc
#endif

extension StreamTests {
    /// Raises this process's open-file limit to at least `files` (each stream is a socket here and one in the server).
    static func raiseFileLimit(to files: Int) throws {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { throw TestFailure("getrlimit: \(errno)") }
        guard limit.rlim_cur < rlim_t(files) else { return }
        guard limit.rlim_max >= rlim_t(files) else { throw TestFailure("the hard open-file limit is \(limit.rlim_max), below \(files)") }
        limit.rlim_cur = rlim_t(files)
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { throw TestFailure("setrlimit: \(errno)") }
    }

    @Test("SIGTERM with 1,000 streams open: the server stops within the deadline and every stream ends cleanly")
    func sigterm() async throws {
        let streams = 1000
        try Self.raiseFileLimit(to: 4 * streams + 1024)
        try await TestDatabase.migrated.value
        // A server started as `withTestServer` starts one, but with its service group in the test's hands.
        var configuration = AppConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.databaseURL = TestDatabase.url
        configuration.weatherProvider = "none"
        configuration.trustedProxies = ["127.0.0.1"]
        configuration.dbPoolSize = 4
        configuration.mediaSyncSeconds = 86_400  // as `withTestServer`: another test's media rows are not this server's
        configuration.rateLimitsEnabled = false
        configuration.streamMaxPerClient = 2 * streams
        let dependencies = AppDependencies.make(configuration: configuration, logger: testLogger)
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let app = buildApplication(configuration: configuration, dependencies: dependencies, logger: testLogger) { channel in
            portContinuation.yield(channel.localAddress?.port ?? 0)
            portContinuation.finish()
        }
        let group = ServiceGroup(configuration: .init(services: [.init(service: app)], logger: testLogger))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            await group.triggerGracefulShutdown()
            _ = try? await running.value
            throw TestFailure("server did not start")
        }
        let server = TestServer(port: port, dependencies: dependencies, configuration: configuration)
        var stopped = false
        var clients: [StreamClient] = []
        defer { clients.forEach { $0.close() } }
        do {
            let region = try await Self.region(server)
            // Opened fifty at a time (the listen backlog), each read up to its first message: every stream is registered.
            for _ in 0..<(streams / 50) {
                clients += try await withThrowingTaskGroup(of: StreamClient.self) { batch in
                    for _ in 0..<50 {
                        batch.addTask {
                            let client = try await server.stream("/v1/stream?regionId=\(region)")
                            if client.status == 200 { _ = try await client.next() }
                            return client
                        }
                    }
                    return try await batch.reduce(into: []) { $0.append($1) }
                }
            }
            let statuses = Dictionary(grouping: clients, by: \.status).mapValues(\.count)
            #expect(statuses == [200: streams], "\(statuses)")
            #expect(try await Self.metric(server, #"stream_open{stream="board"}"#) == Double(streams))
            // One event to every stream before the end: they are live, not just open.
            let author = try await server.anonymousAccount()
            let postID = try await Self.post(server, author, region: region)
            var delivered = 0
            for client in clients where client.status == 200 {
                let message = try await client.nextEvent()
                if message.event == "post" && message.postID == postID { delivered += 1 }
            }
            #expect(delivered == streams)

            await group.triggerGracefulShutdown()
            // A deadline for failure, not a delay: the group's run returns as soon as the server has drained.
            stopped = await withTaskGroup(of: Bool.self) { race in
                race.addTask {
                    _ = try? await running.value
                    return true
                }
                race.addTask {
                    try? await Task.sleep(for: .seconds(30))
                    return false
                }
                let first = await race.next() ?? false
                race.cancelAll()
                return first
            }
            #expect(stopped, "the server did not stop within 30 s of the graceful shutdown")
            var clean = 0
            var cut = 0
            var open = 0
            for client in clients {
                if await client.waitForEnd(timeout: .seconds(10)) {
                    if client.endedCleanly { clean += 1 } else { cut += 1 }
                } else {
                    open += 1
                }
            }
            #expect(clean == streams, "clean ends \(clean), cut connections \(cut), still open \(open)")
        } catch {
            await group.triggerGracefulShutdown()
            clients.forEach { $0.close() }
            _ = try? await running.value
            throw error
        }
        if !stopped {
            clients.forEach { $0.close() }
            running.cancel()
        }
    }
}
