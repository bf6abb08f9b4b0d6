import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Testing

@testable import WeatherboardServer

/// `POST /v1/media` against hostile and unlucky uploads (issue #19, points 2 and 6): only `file` and `alt` are read,
/// every body is bounded in size and time, uploads in flight are capped per client, and the server's own failures
/// are not the client's 400.
@Suite("Upload limits")
struct UploadLimitsTests {
    static let boundary = "wblimits7c2d"

    static func part(_ name: String, _ value: [UInt8], filename: String? = nil) -> [UInt8] {
        Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\(filename.map { "; filename=\"\($0)\"" } ?? "")\r\n\r\n".utf8) + value + [13, 10]
    }

    static let end = Array("--\(boundary)--\r\n".utf8)

    static func upload(_ server: TestServer, token: String, _ body: [UInt8]) async throws -> (status: Int, code: String?, message: String?) {
        let response = try await server.request(
            "POST", "/v1/media",
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "multipart/form-data; boundary=\(boundary)")], body: body
        )
        return (response.status, response.errorCode, response.errorMessage)
    }

    @Test("only `file` and `alt` are read: another part, a nameless part, a second `alt` or a second `file` is refused (422 naming it)")
    func onlyFileAndAlt() async throws {
        try await withMediaServer { server in
            let account = try await server.anonymousAccount()
            let jpeg = try await MediaFixtures.jpeg
            let file = Self.part("file", jpeg, filename: "a.jpg")
            let note = try await Self.upload(server, token: account.token, Self.part("note", Array("hi".utf8)) + file + Self.end)
            #expect(note.status == 422 && note.code == "invalid_field", "\(note)")
            #expect(note.message?.hasPrefix("note:") == true, "\(note)")
            let nameless = Array("--\(Self.boundary)\r\nContent-Type: text/plain\r\n\r\nhi\r\n".utf8) + file + Self.end
            let refusedNameless = try await Self.upload(server, token: account.token, nameless)
            #expect(refusedNameless.status == 422 && refusedNameless.message?.hasPrefix("part:") == true, "\(refusedNameless)")
            let twoAlts = try await Self.upload(server, token: account.token, Self.part("alt", Array("a".utf8)) + Self.part("alt", Array("b".utf8)) + file + Self.end)
            #expect(twoAlts.status == 422 && twoAlts.message?.hasPrefix("alt:") == true, "\(twoAlts)")
            let twoFiles = try await Self.upload(server, token: account.token, file + file + Self.end)
            #expect(twoFiles.status == 422 && twoFiles.message?.hasPrefix("file:") == true, "\(twoFiles)")
            // The two parts that are read still work, in either order.
            let both = try await Self.upload(server, token: account.token, file + Self.part("alt", Array("창밖의 비".utf8)) + Self.end)
            #expect(both.status == 201, "\(both)")
        }
    }

    @Test("a chunked body is bounded by MEDIA_MAX_BYTES plus the framing allowance, whatever its parts: 413 once crossed")
    func chunkedBodyIsBounded() async throws {
        try await withMediaServer(configure: { $0.mediaMaxBytes = 64 * 1024 }) { server in
            let account = try await server.anonymousAccount()
            // A complete small form, then an epilogue the parser skips: nothing but the body's own size can stop it.
            let form = Self.part("alt", Array("x".utf8)) + Self.end + [UInt8](repeating: 0x65, count: 4 * 1024 * 1024)
            let head = RawHTTPClient.head(
                "POST /v1/media HTTP/1.1",
                ["Authorization: Bearer \(account.token)", "Content-Type: multipart/form-data; boundary=\(Self.boundary)", "Transfer-Encoding: chunked"]
            )
            let answer = await RawHTTPClient(port: server.port).exchange(head: head, body: RawHTTPClient.chunked(form))
            #expect(answer.status == 413, "\(answer)")
            #expect(answer.errorCode == "payload_too_large", "\(answer)")
        }
    }

    /// Which bound a stalled upload meets first.
    enum StallBound: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// `MEDIA_UPLOAD_TIMEOUT_SECONDS` 1 s: the upload's whole-body limit.
        case uploadTimeLimit
        /// `BODY_TIMEOUT_SECONDS` 1 s, the whole-body limit far off: the wait between reads.
        case bodyTimeout

        var testDescription: String { rawValue }
        var message: String { self == .uploadTimeLimit ? "the upload did not arrive within" : "no byte of the request body arrived" }
    }

    @Test("an upload that stops arriving answers 408 at MEDIA_UPLOAD_TIMEOUT_SECONDS or BODY_TIMEOUT_SECONDS, whichever comes first, and its temporary file is gone", arguments: StallBound.allCases)
    func timeLimit(_ bound: StallBound) async throws {
        let directory = MediaFixtures.directory + "/tmp-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try await withMediaServer(configure: {
            $0.mediaUploadTimeoutSeconds = bound == .uploadTimeLimit ? 1 : 120
            $0.bodyTimeoutSeconds = bound == .bodyTimeout ? 1 : 60
            $0.uploadTemporaryDirectory = directory
        }) { server in
            let account = try await server.anonymousAccount()
            // More than one write batch of the file part, so a temporary file exists, then the client waits.
            let file = Self.part("file", [0xFF, 0xD8, 0xFF] + [UInt8](repeating: 7, count: 1024 * 1024), filename: "a.jpg") + Self.end
            let head = RawHTTPClient.head(
                "POST /v1/media HTTP/1.1",
                ["Authorization: Bearer \(account.token)", "Content-Type: multipart/form-data; boundary=\(Self.boundary)", "Content-Length: \(file.count)"]
            )
            let answer = await RawHTTPClient(port: server.port).exchange(head: head, body: file, sendBytes: 700 * 1024)
            #expect(answer.status == 408, "\(answer)")
            #expect(answer.errorCode == "request_timeout", "\(answer)")
            #expect(answer.errorMessage?.contains(bound.message) == true, "\(answer)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }

    @Test("uploads in flight: 2 per account and 8 per client address, however many arrive at once; the rest 429 with Retry-After")
    func inFlightCap() async throws {
        try await withMediaServer(configure: { $0.mediaUploadTimeoutSeconds = 2 }) { server in
            let accounts = try await withThrowingTaskGroup(of: TestAccount.self) { group in
                for _ in 0..<6 { group.addTask { try await server.anonymousAccount() } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let stalled = Self.part("file", [0xFF, 0xD8, 0xFF] + [UInt8](repeating: 7, count: 64 * 1024), filename: "a.jpg") + Self.end
            func head(_ token: String, _ address: String) -> String {
                RawHTTPClient.head(
                    "POST /v1/media HTTP/1.1",
                    [
                        "Authorization: Bearer \(token)", "X-Forwarded-For: \(address)",
                        "Content-Type: multipart/form-data; boundary=\(Self.boundary)", "Content-Length: \(stalled.count)",
                    ]
                )
            }
            let client = RawHTTPClient(port: server.port)
            // One account, 6 at once, each from its own address: the account's bound.
            let oneAccount = await withTaskGroup(of: RawHTTPClient.Answer.self) { group in
                for _ in 0..<6 {
                    group.addTask { await client.exchange(head: head(accounts[0].token, TestClient.randomAddress()), body: stalled, sendBytes: 1024) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(oneAccount.filter { $0.status == 408 }.count == UploadSlots.perAccount, "\(oneAccount.map(\.description))")
            let refused = oneAccount.filter { $0.status == 429 }
            #expect(refused.count == 6 - UploadSlots.perAccount, "\(oneAccount.map(\.description))")
            #expect(refused.allSatisfy { $0.errorCode == "rate_limited" && $0.headers["retry-after"] == String(UploadSlots.retryAfterSeconds) })
            // One address, 5 accounts × 2 at once: the address's bound.
            let address = TestClient.randomAddress()
            let oneAddress = await withTaskGroup(of: RawHTTPClient.Answer.self) { group in
                for account in accounts.dropFirst() {
                    for _ in 0..<2 { group.addTask { await client.exchange(head: head(account.token, address), body: stalled, sendBytes: 1024) } }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(oneAddress.filter { $0.status == 408 }.count == UploadSlots.perClientAddress, "\(oneAddress.map(\.description))")
            #expect(oneAddress.filter { $0.status == 429 }.count == 10 - UploadSlots.perClientAddress, "\(oneAddress.map(\.description))")
            // Every slot was given back.
            let jpeg = try await MediaFixtures.jpeg
            #expect(try await server.upload(jpeg, token: accounts[0].token).status == 201)
        }
    }

    @Test("a temporary file that cannot be written is the server's failure: 503 media_unavailable with Retry-After, not 400")
    func storageFailure() async throws {
        try await withMediaServer(configure: { $0.uploadTemporaryDirectory = "/nonexistent-\(UUID().uuidString)/uploads" }) { server in
            let account = try await server.anonymousAccount()
            let response = try await server.upload(try await MediaFixtures.jpeg, token: account.token)
            #expect(response.status == 503, "\(response.text)")
            #expect(response.errorCode == "media_unavailable")
            #expect(response.header("retry-after") == String(MultipartUpload.storageRetryAfterSeconds))
        }
    }

    @Test("a cancelled upload ends as a cancellation (503 from the envelope), not as the client's 400")
    func cancellation() async throws {
        let (body, source) = RequestBody.makeStream()
        let reading = Task {
            try await MultipartUpload.read(
                body, boundary: Self.boundary, maxFileBytes: 1 << 20, maxFieldBytes: 8192, temporaryDirectory: MediaFixtures.directory, timeLimit: .seconds(60)
            )
        }
        await source.yield(ByteBuffer(bytes: Self.part("alt", Array("x".utf8)) + Array("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc".utf8)))
        reading.cancel()
        let result = await reading.result
        source.finish()
        switch result {
        case .success: Issue.record("a cancelled upload was read as complete")
        case .failure(let error):
            #expect(error is CancellationError, "\(error)")
            let envelope = RequestEnvelopeMiddleware(logger: testLogger, metrics: AppMetrics())
            let request = Request(head: HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/v1/media"), body: RequestBody(buffer: ByteBuffer()))
            #expect(envelope.errorResponse(for: error, request: request, requestID: "t").status == .serviceUnavailable)
        }
    }
}
