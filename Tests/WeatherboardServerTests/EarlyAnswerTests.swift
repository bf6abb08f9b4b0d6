import Foundation
import Testing

@testable import WeatherboardServer

/// Early answers (issue #19, point 3): a client that writes its whole body before it reads must see the answer the
/// server gave before reading that body, whatever the answer and the route.
@Suite("Early answers")
struct EarlyAnswerTests {
    /// The body: 17 MiB, one more than `MEDIA_MAX_BYTES` allows.
    static let seventeenMiB = [UInt8](repeating: 0x61, count: 17 * 1024 * 1024)

    static func check(_ answer: RawHTTPClient.Answer, status: Int, code: String, bodyBytes: Int) {
        #expect(answer.writeError == nil, "the client could not write its body: \(answer)")
        #expect(answer.written > bodyBytes, "\(answer)")
        #expect(answer.status == status, "\(answer)")
        #expect(answer.errorCode == code, "\(answer)")
        #expect(answer.headers["connection"]?.lowercased() == "close", "\(answer.headers)")
        #expect(answer.closedAfterAnswer, "the server did not end the connection after its answer: \(answer)")
    }

    @Test("17 MiB written before reading, with `Connection: close` as urllib sends it: the 413 and (16 MiB) 401 of POST /v1/media and the 413 of POST /v1/posts arrive")
    func oversizedAndUnauthenticated() async throws {
        try await withMediaServer { server in
            let account = try await server.anonymousAccount()
            let client = RawHTTPClient(port: server.port)
            let body = Self.seventeenMiB
            let upload = RawHTTPClient.head(
                "POST /v1/media HTTP/1.1",
                ["Authorization: Bearer \(account.token)", "Content-Type: multipart/form-data; boundary=x", "Content-Length: \(body.count)", "Connection: close"]
            )
            Self.check(await client.exchange(head: upload, body: body), status: 413, code: "payload_too_large", bodyBytes: body.count)
            // Under the upload limit, so the missing token is what answers.
            let sixteenMiB = Array(body.prefix(16 * 1024 * 1024))
            let anonymous = RawHTTPClient.head(
                "POST /v1/media HTTP/1.1", ["Content-Type: multipart/form-data; boundary=x", "Content-Length: \(sixteenMiB.count)", "Connection: close"]
            )
            Self.check(await client.exchange(head: anonymous, body: sixteenMiB), status: 401, code: "unauthenticated", bodyBytes: sixteenMiB.count)
            let post = RawHTTPClient.head(
                "POST /v1/posts HTTP/1.1",
                ["Authorization: Bearer \(account.token)", "Content-Type: application/json", "Content-Length: \(body.count)", "Connection: close"]
            )
            Self.check(await client.exchange(head: post, body: body), status: 413, code: "payload_too_large", bodyBytes: body.count)
            // The same body chunked on a kept-alive connection: no length to refuse up front, so it is refused while collected.
            let chunkedPost = RawHTTPClient.head(
                "POST /v1/posts HTTP/1.1", ["Authorization: Bearer \(account.token)", "Content-Type: application/json", "Transfer-Encoding: chunked"]
            )
            let chunked = RawHTTPClient.chunked(body, chunkBytes: 256 * 1024)
            Self.check(await client.exchange(head: chunkedPost, body: chunked), status: 413, code: "payload_too_large", bodyBytes: chunked.count)
            #expect(try await server.request("GET", "/healthz").status == 200)
        }
    }

    @Test("16 MiB of a type the upload does not take, written before reading: the 415 arrives")
    func unsupportedType() async throws {
        try await withMediaServer { server in
            let account = try await server.anonymousAccount()
            // Under the upload limit (so not a 413), and larger than the socket buffers on both sides.
            let body = [UInt8](repeating: 0x62, count: 16 * 1024 * 1024)
            let head = RawHTTPClient.head(
                "POST /v1/media HTTP/1.1",
                ["Authorization: Bearer \(account.token)", "Content-Type: image/jpeg", "Content-Length: \(body.count)", "Connection: close"]
            )
            Self.check(await RawHTTPClient(port: server.port).exchange(head: head, body: body), status: 415, code: "unsupported_media_type", bodyBytes: body.count)
        }
    }

    @Test("a chunked upload refused at its first unknown part, written whole before reading: the 422 arrives")
    func chunkedRefusal() async throws {
        try await withMediaServer { server in
            let account = try await server.anonymousAccount()
            let boundary = "early4a1b"
            var form: [UInt8] = []
            let filler = [UInt8](repeating: 0x78, count: 4096)
            for i in 0..<2_000 {
                form += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"field\(i)\"\r\n\r\n".utf8) + filler + [13, 10]
            }
            form += Array("--\(boundary)--\r\n".utf8)
            let body = RawHTTPClient.chunked(form)
            let head = RawHTTPClient.head(
                "POST /v1/media HTTP/1.1",
                ["Authorization: Bearer \(account.token)", "Content-Type: multipart/form-data; boundary=\(boundary)", "Transfer-Encoding: chunked"]
            )
            let answer = await RawHTTPClient(port: server.port).exchange(head: head, body: body)
            Self.check(answer, status: 422, code: "invalid_field", bodyBytes: body.count)
            #expect(answer.errorMessage?.hasPrefix("field0:") == true, "\(answer)")
        }
    }

    @Test("the discard after an early answer is bounded in time: a client that stops sending is closed on after the lingering close's silence")
    func discardIsBounded() async throws {
        try await withMediaServer { server in
            let account = try await server.anonymousAccount()
            // 1 GiB announced on a kept-alive connection, 1 MiB sent, then the client only reads.
            let head = RawHTTPClient.head(
                "POST /v1/media HTTP/1.1",
                ["Authorization: Bearer \(account.token)", "Content-Type: multipart/form-data; boundary=x", "Content-Length: \(1 << 30)"]
            )
            let answer = await RawHTTPClient(port: server.port).exchange(head: head, body: [UInt8](repeating: 0x61, count: 1 << 20))
            #expect(answer.status == 413, "\(answer)")
            #expect(answer.headers["connection"]?.lowercased() == "close", "\(answer.headers)")
            #expect(answer.closedAfterAnswer, "the server kept reading past its bound: \(answer)")
        }
    }
}
