import Foundation
import Testing

@testable import WeatherboardServer

/// Deadlines on every request (issue #35), over raw sockets against a real server whose deadlines are set short
/// through its configuration: what a stalled, slow or hostile client gets, and what it leaves behind.
@Suite("Request deadlines")
struct DeadlineTests {
    /// Header 2 s, body 2 s between reads, 3 s for a whole body, kept alive 2 s, a heartbeat every second.
    static func short(_ configuration: inout AppConfiguration) {
        configuration.headerTimeoutSeconds = 2
        configuration.bodyTimeoutSeconds = 2
        configuration.requestBodyDeadlineSeconds = 3
        configuration.idleTimeoutSeconds = 2
        configuration.streamHeartbeatSeconds = 1
    }

    /// A post that would be created if its body arrived.
    static let postBody = Array(#"{"weatherType":"rain","category":"food","body":"비 오는 날엔 파전","regionId":"1835848"}"#.utf8)

    static func postHead(_ account: TestAccount, length: Int, target: String = "/v1/posts") -> [UInt8] {
        Array(
            RawHTTPClient.head(
                "POST \(target) HTTP/1.1",
                ["Authorization: Bearer \(account.token)", "Content-Type: application/json", "Content-Length: \(length)"]
            ).utf8
        )
    }

    /// The same head with `Transfer-Encoding: chunked` instead of a length.
    static func chunkedPostHead(_ account: TestAccount) -> [UInt8] {
        Array(
            RawHTTPClient.head(
                "POST /v1/posts HTTP/1.1", ["Authorization: Bearer \(account.token)", "Content-Type: application/json", "Transfer-Encoding: chunked"]
            ).utf8
        )
    }

    static func posts(of account: TestAccount, on server: TestServer) async throws -> Int {
        let response = try await server.request("GET", "/v1/posts?authorId=\(account.id)&limit=100", headers: [("Authorization", "Bearer \(account.token)")])
        try #require(response.status == 200, "\(response.status) \(response.text)")
        return (response.object["items"] as? [Any])?.count ?? -1
    }

    /// `http_connection_deadlines_total` by reason.
    static func deadlineCounts(_ server: TestServer) async throws -> [String: Double] {
        let text = try await server.metricsText()
        var counts: [String: Double] = [:]
        for reason in ["header", "header_silent", "keepalive", "body_stalled", "body_deadline", "target_too_long", "malformed"] {
            counts[reason] = TestServer.metric("http_connection_deadlines_total", labels: "reason=\"\(reason)\"", in: text)
        }
        return counts
    }

    /// One answer, the contract's JSON error with `code`, `Connection: close`, and then an orderly end of stream.
    static func expectOnlyError(_ outcome: RawConnection.Outcome, status: Int, code: String, message: String? = nil) {
        let answers = outcome.answers
        #expect(answers.count == 1, "\(outcome)")
        #expect(answers.first?.status == status, "\(outcome)")
        #expect(answers.first?.errorCode == code, "\(outcome)")
        if let message { #expect(answers.first?.errorMessage?.contains(message) == true, "\(outcome)") }
        #expect(answers.first?.headers["connection"]?.lowercased() == "close", "\(outcome)")
        #expect(answers.first?.headers["x-request-id"]?.isEmpty == false, "\(outcome)")
        #expect(outcome.endOfStream, "the connection was not ended in order after the answer: \(outcome)")
        #expect(outcome.writeError == nil && outcome.readError == nil, "\(outcome)")
    }

    @Test("a JSON body that stops arriving: 408 `request_timeout` at the body deadline between reads, then closed; no post")
    func stalledBody() async throws {
        // The whole-body deadline far off: only the wait between reads can end it.
        try await withTestServer(configure: { Self.short(&$0); $0.requestBodyDeadlineSeconds = 60 }) { server in
            let account = try await server.anonymousAccount()
            let outcome = await RawConnection(port: server.port).run([
                .send(Self.postHead(account, length: Self.postBody.count) + Self.postBody.prefix(10)), .readToEnd,
            ])
            Self.expectOnlyError(outcome, status: 408, code: "request_timeout", message: "no byte of the request body arrived")
            // Chunked, no length: one chunk, then nothing.
            let chunked = await RawConnection(port: server.port).run([
                .send(Self.chunkedPostHead(account) + RawHTTPClient.chunked(Self.postBody, chunkBytes: 10).prefix(14)), .readToEnd,
            ])
            Self.expectOnlyError(chunked, status: 408, code: "request_timeout", message: "no byte of the request body arrived")
            #expect(try await Self.posts(of: account, on: server) == 0)
            let counts = try await Self.deadlineCounts(server)
            #expect(counts["body_stalled", default: 0] == 2, "\(counts)")
            #expect(try await server.request("GET", "/healthz").status == 200)
        }
    }

    @Test("a body trickled a few bytes at a time, never stalling: 408 at the whole-body deadline, read by a client that writes it all before it reads; no post")
    func trickledBody() async throws {
        // The wait between reads far off: only the whole-body deadline can end it.
        try await withTestServer(configure: { Self.short(&$0); $0.bodyTimeoutSeconds = 60 }) { server in
            let account = try await server.anonymousAccount()
            // 5 bytes every 200 ms: the whole body takes 4 s, past the 3 s deadline.
            let outcome = await RawConnection(port: server.port).run([
                .send(Self.postHead(account, length: Self.postBody.count)),
                .trickle(Self.postBody, chunk: 5, every: .milliseconds(200)),
                .readToEnd,
            ])
            Self.expectOnlyError(outcome, status: 408, code: "request_timeout", message: "did not arrive whole within 3 s")
            // Chunked, 5 bytes a chunk, a chunk every 200 ms.
            let chunked = await RawConnection(port: server.port).run([
                .send(Self.chunkedPostHead(account)),
                .trickle(RawHTTPClient.chunked(Self.postBody, chunkBytes: 5), chunk: 10, every: .milliseconds(200)),
                .readToEnd,
            ])
            Self.expectOnlyError(chunked, status: 408, code: "request_timeout", message: "did not arrive whole within 3 s")
            #expect(try await Self.posts(of: account, on: server) == 0)
            let counts = try await Self.deadlineCounts(server)
            #expect(counts["body_deadline", default: 0] == 2, "\(counts)")
            #expect(counts["body_stalled", default: 0] == 0, "\(counts)")
        }
    }

    @Test("a body that stalls past the deadline and is then written whole before reading: the 408 is read, nothing is created")
    func stalledThenWrittenWhole() async throws {
        try await withTestServer(configure: Self.short) { server in
            let account = try await server.anonymousAccount()
            // The rest is larger than what the socket buffers hold: it is read (and discarded) while the client writes.
            let padded = Self.postBody + [UInt8](repeating: 0x20, count: 60_000)
            let outcome = await RawConnection(port: server.port).run([
                .send(Self.postHead(account, length: padded.count) + padded.prefix(10)),
                .pause(.seconds(3)),
                .send(Array(padded.dropFirst(10))),
                .readToEnd,
            ])
            Self.expectOnlyError(outcome, status: 408, code: "request_timeout")
            #expect(try await Self.posts(of: account, on: server) == 0)
        }
    }

    @Test("a head that never completes: 408 at the header deadline, then closed; a connection that never sends a byte: closed with nothing")
    func headerDeadline() async throws {
        try await withTestServer(configure: Self.short) { server in
            let partial = await RawConnection(port: server.port).run([.send(Array("POST /v1/posts HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le".utf8)), .readToEnd])
            Self.expectOnlyError(partial, status: 408, code: "request_timeout", message: "request head")
            let silent = await RawConnection(port: server.port).run([.readToEnd])
            #expect(silent.received.isEmpty, "\(silent)")
            #expect(silent.endOfStream && silent.readError == nil, "\(silent)")
            let counts = try await Self.deadlineCounts(server)
            #expect(counts["header", default: 0] == 1, "\(counts)")
            #expect(counts["header_silent", default: 0] == 1, "\(counts)")
        }
    }

    @Test("kept alive: silent after an answer, closed at the keep-alive deadline; part of a next head, 408; many requests within the deadlines, all answered")
    func keptAlive() async throws {
        try await withTestServer(configure: Self.short) { server in
            let healthz = Array(RawHTTPClient.head("GET /healthz HTTP/1.1", []).utf8)
            let idle = await RawConnection(port: server.port).run([.send(healthz), .readToEnd])
            #expect(idle.answers.map(\.status) == [200], "\(idle)")
            #expect(idle.endOfStream, "\(idle)")
            let counts = try await Self.deadlineCounts(server)
            #expect(counts["keepalive", default: 0] == 1, "\(counts)")
            #expect(counts["header_silent", default: 0] == 0, "\(counts)")

            let partial = await RawConnection(port: server.port).run([.send(healthz), .pause(.milliseconds(500)), .send(Array("GET /heal".utf8)), .readToEnd])
            #expect(partial.answers.map(\.status) == [200, 408], "\(partial)")
            #expect(partial.answers.last?.errorCode == "request_timeout", "\(partial)")
            #expect(partial.endOfStream, "\(partial)")

            // Six requests a second apart: each within its own deadlines, though together they outlast every one.
            var steps: [RawConnection.Step] = []
            for _ in 0..<6 { steps += [.send(healthz), .pause(.seconds(1))] }
            let steady = await RawConnection(port: server.port).run(steps + [.readToEnd])
            #expect(steady.answers.map(\.status) == Array(repeating: 200, count: 6), "\(steady)")
        }
    }

    @Test("a request target over 8 KiB: 414 `uri_too_long` as a first request (9 KiB and 100 KiB) and on a kept-alive connection, which stays usable; 8 KiB exactly is answered")
    func longTarget() async throws {
        try await withTestServer(configure: Self.short) { server in
            func get(_ targetBytes: Int) -> [UInt8] {
                let prefix = "/healthz?pad="
                return Array(RawHTTPClient.head("GET \(prefix)\(String(repeating: "a", count: targetBytes - prefix.utf8.count)) HTTP/1.1", []).utf8)
            }
            for size in [9 * 1024, 100 * 1024] {
                let first = await RawConnection(port: server.port).run([.send(get(size)), .readToEnd])
                Self.expectOnlyError(first, status: 414, code: "uri_too_long")
            }
            // The same line sent 100 bytes a write: the bound is counted across reads.
            let split = await RawConnection(port: server.port).run([.trickle(get(9 * 1024), chunk: 100, every: .milliseconds(1)), .readToEnd])
            Self.expectOnlyError(split, status: 414, code: "uri_too_long")
            let exact = await RawConnection(port: server.port).run([.send(get(8 * 1024)), .readToEnd])
            #expect(exact.answers.map(\.status) == [200], "\(exact)")

            let healthz = Array(RawHTTPClient.head("GET /healthz HTTP/1.1", []).utf8)
            let kept = await RawConnection(port: server.port).run([.send(healthz + get(9 * 1024) + healthz), .readToEnd])
            #expect(kept.answers.map(\.status) == [200, 414, 200], "\(kept)")
            #expect(kept.answers.dropFirst().first?.errorCode == "uri_too_long", "\(kept)")
            let counts = try await Self.deadlineCounts(server)
            #expect(counts["target_too_long", default: 0] == 3, "\(counts)")
        }
    }

    @Test("a head the decoder refuses gets the contract's JSON error: a kept-alive 100 KiB target 414, a 100 KiB header, a garbage line and a NUL in the target 400")
    func unreadableHeads() async throws {
        try await withTestServer(configure: Self.short) { server in
            let healthz = Array(RawHTTPClient.head("GET /healthz HTTP/1.1", []).utf8)
            let longTarget = Array(RawHTTPClient.head("GET /healthz?pad=\(String(repeating: "c", count: 100 * 1024)) HTTP/1.1", []).utf8)
            let kept = await RawConnection(port: server.port).run([.send(healthz), .readUntil(marker: Array("ok\"}".utf8), count: 1), .send(longTarget), .readToEnd])
            #expect(kept.answers.map(\.status) == [200, 414], "\(kept)")
            #expect(kept.answers.last?.errorCode == "uri_too_long", "\(kept)")
            #expect(kept.endOfStream, "\(kept)")

            let bigHeader = Array(RawHTTPClient.head("GET /healthz HTTP/1.1", ["X-Big: \(String(repeating: "d", count: 100 * 1024))"]).utf8)
            for request in [bigHeader, Array("GARBAGE\r\n\r\n".utf8), Array("GET /heal\u{0}thz HTTP/1.1\r\nHost: x\r\n\r\n".utf8)] {
                let outcome = await RawConnection(port: server.port).run([.send(request), .readToEnd])
                Self.expectOnlyError(outcome, status: 400, code: "bad_request")
            }
            let counts = try await Self.deadlineCounts(server)
            #expect(counts["target_too_long", default: 0] == 1, "\(counts)")
            #expect(counts["malformed", default: 0] == 3, "\(counts)")
            #expect(try await server.request("GET", "/healthz").status == 200)
        }
    }

    @Test("a 9 KiB target with a 4 MiB body written whole before reading: the 414 is read")
    func longTargetWithBody() async throws {
        try await withTestServer(configure: Self.short) { server in
            let account = try await server.anonymousAccount()
            let body = [UInt8](repeating: 0x61, count: 4 * 1024 * 1024)
            let target = "/v1/posts?pad=" + String(repeating: "b", count: 9 * 1024)
            let outcome = await RawConnection(port: server.port).run([.send(Self.postHead(account, length: body.count, target: target) + body), .readToEnd])
            Self.expectOnlyError(outcome, status: 414, code: "uri_too_long")
            #expect(try await Self.posts(of: account, on: server) == 0)
        }
    }

    @Test("an open live stream outlives every deadline with its heartbeats")
    func streamOutlivesDeadlines() async throws {
        try await withTestServer(configure: Self.short) { server in
            let head = Array(RawHTTPClient.head("GET /v1/stream HTTP/1.1", ["Accept: text/event-stream"]).utf8)
            // Six heartbeats a second apart: past the header, body, whole-body and keep-alive deadlines, twice.
            let outcome = await RawConnection(port: server.port).run([.send(head), .readUntil(marker: Array(":\n\n".utf8), count: 6)])
            #expect(outcome.answers.first?.status == 200, "\(outcome)")
            #expect(outcome.markers == 6, "\(outcome)")
            #expect(!outcome.endOfStream && outcome.readError == nil, "\(outcome)")
            let ended = try await server.metric("http_connection_deadlines_total")
            #expect(ended == 0, "a deadline ended a request or connection while the stream was open")
        }
    }

    @Test("uploads keep their own whole-body bound: an upload trickled past REQUEST_BODY_DEADLINE_SECONDS is taken")
    func uploadNotBoundByJSONDeadline() async throws {
        try await withMediaServer(configure: Self.short) { server in
            let account = try await server.anonymousAccount()
            let image = try await MediaFixtures.jpeg
            let boundary = "deadline7c"
            let body = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8)
                + image + Array("\r\n--\(boundary)--\r\n".utf8)
            let head = Array(
                RawHTTPClient.head(
                    "POST /v1/media HTTP/1.1",
                    ["Authorization: Bearer \(account.token)", "Content-Type: multipart/form-data; boundary=\(boundary)", "Content-Length: \(body.count)", "Connection: close"]
                ).utf8
            )
            // In 20 pieces 250 ms apart: about 5 s, past the 3 s whole-body deadline of other bodies.
            let outcome = await RawConnection(port: server.port).run([
                .send(head), .trickle(body, chunk: body.count / 20 + 1, every: .milliseconds(250)), .readToEnd,
            ])
            #expect(outcome.answers.first?.status == 201, "\(outcome)")
            let counts = try await Self.deadlineCounts(server)
            #expect(counts["body_deadline", default: 0] == 0, "\(counts)")
        }
    }

    @Test("a burst of 40 silent, 40 half-headed and 40 stalled-body connections: each ended by its own deadline, counted once, nothing created, /healthz answering throughout")
    func burst() async throws {
        try await withTestServer(configure: { Self.short(&$0); $0.requestBodyDeadlineSeconds = 60 }) { server in
            let account = try await server.anonymousAccount()
            // While the 120 are held open: 20 health checks, one after another.
            async let healthChecks: [Int] = {
                var statuses: [Int] = []
                for _ in 0..<20 { statuses.append((try? await server.request("GET", "/healthz").status) ?? 0) }
                return statuses
            }()
            let outcomes = await withTaskGroup(of: (String, RawConnection.Outcome).self) { group in
                for i in 0..<120 {
                    group.addTask {
                        let connection = RawConnection(port: server.port)
                        switch i % 3 {
                        case 0: return ("silent", await connection.run([.readToEnd]))
                        case 1: return ("head", await connection.run([.send(Array("GET /healthz HTTP/1.1\r\nHo".utf8)), .readToEnd]))
                        default: return ("body", await connection.run([.send(Self.postHead(account, length: Self.postBody.count) + Self.postBody.prefix(20)), .readToEnd]))
                        }
                    }
                }
                var all: [(String, RawConnection.Outcome)] = []
                for await outcome in group { all.append(outcome) }
                return all
            }
            #expect(await healthChecks == Array(repeating: 200, count: 20))
            for (kind, outcome) in outcomes {
                #expect(outcome.endOfStream && outcome.readError == nil && outcome.writeError == nil, "\(kind): \(outcome)")
                switch kind {
                case "silent": #expect(outcome.received.isEmpty, "\(outcome)")
                default: #expect(outcome.answers.map(\.status) == [408], "\(kind): \(outcome)")
                }
            }
            let counts = try await Self.deadlineCounts(server)
            #expect(counts["header_silent", default: 0] == 40, "\(counts)")
            #expect(counts["header", default: 0] == 40, "\(counts)")
            #expect(counts["body_stalled", default: 0] == 40, "\(counts)")
            #expect(try await Self.posts(of: account, on: server) == 0)
        }
    }

    @Test("absurd deadline settings are refused at start, naming the variable")
    func configuration() throws {
        for name in ["HEADER_TIMEOUT_SECONDS", "BODY_TIMEOUT_SECONDS", "REQUEST_BODY_DEADLINE_SECONDS", "KEEPALIVE_TIMEOUT_SECONDS"] {
            for value in ["0", "-1", "3601", "99999999999999999999", "1e3", "ten"] {
                #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: [name: value]) }
                do {
                    _ = try AppConfiguration(environment: [name: value])
                } catch {
                    #expect("\(error)".contains(name), "\(error)")
                }
            }
        }
        let defaults = try AppConfiguration(environment: [:])
        #expect(defaults.headerTimeoutSeconds == 60 && defaults.bodyTimeoutSeconds == 60)
        #expect(defaults.requestBodyDeadlineSeconds == 30 && defaults.idleTimeoutSeconds == 75)
    }
}
