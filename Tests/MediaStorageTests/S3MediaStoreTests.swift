import CurlClient
import Foundation
import Hashing
@testable import MediaStorage
import Testing

/// What only the S3 store does: signing, the payload hash, error mapping, bounded failures.
@Suite struct S3MediaStoreTests {
    static let emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    func store(port: Int, timeoutMilliseconds: Int = 5000) -> S3MediaStore {
        S3MediaStore(
            endpoint: "http://127.0.0.1:\(port)/", bucket: "media-bucket", region: "eu-test-1",
            accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalr/XUtnFEMI+K7MDENG:bPxRfiCY",
            publicBaseURL: "https://cdn.example.test/media", httpClient: testIO.httpClient, timeoutMilliseconds: timeoutMilliseconds
        )
    }

    @Test func requestsAreSignedAndCarryThePayloadHash() async throws {
        try await RecordingServer.with { server, port in
            let store = store(port: port)
            let body = patternBytes(3 * 1024 * 1024)  // past curl's 1 MiB "Expect: 100-continue" threshold
            try await store.put("public/abc.jpg", body, contentType: "image/jpeg")
            _ = try await store.get("public/abc.jpg")
            try await store.delete("public/abc.jpg")

            let requests = server.requests
            #expect(requests.map(\.method) == ["PUT", "GET", "DELETE"])
            for request in requests {
                #expect(request.uri == "/media-bucket/public/abc.jpg")  // path style
                let authorization = request.header("Authorization") ?? ""
                #expect(authorization.hasPrefix("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"))
                #expect(authorization.contains("/eu-test-1/s3/aws4_request"))
                let signed = authorization.split(separator: "SignedHeaders=").last?.split(separator: ",").first ?? ""
                let signedHeaders = signed.split(separator: ";").map(String.init)
                #expect(signedHeaders.contains("host"))
                #expect(signedHeaders.contains("x-amz-content-sha256"))
                #expect(signedHeaders.contains("x-amz-date"))
                // An empty "Expect:" in the signed list breaks the signature at the server.
                #expect(!signedHeaders.contains("expect"))
                #expect(request.header("X-Amz-Date") != nil)
            }
            #expect(requests[0].header("x-amz-content-sha256") == Hex.encode(Digest.sha256(body)))
            #expect(requests[0].header("Content-Type") == "image/jpeg")
            #expect(requests[0].body == body)
            #expect(requests[1].header("x-amz-content-sha256") == Self.emptyHash)
            #expect(requests[2].header("x-amz-content-sha256") == Self.emptyHash)
            #expect(store.publicURL(for: "public/abc.jpg") == "https://cdn.example.test/media/public/abc.jpg")
        }
    }

    @Test func moveIsAServerSideCopyThenADelete() async throws {
        try await RecordingServer.with { server, port in
            try await store(port: port).move("public/abc.jpg", to: "private/abc.jpg")
            let requests = server.requests
            #expect(requests.map(\.method) == ["PUT", "DELETE"])
            #expect(requests.first?.uri == "/media-bucket/private/abc.jpg")
            #expect(requests.first?.header("x-amz-copy-source") == "/media-bucket/public/abc.jpg")
            #expect(requests.first?.header("x-amz-content-sha256") == Self.emptyHash)
            #expect(requests.last?.uri == "/media-bucket/public/abc.jpg")
        }
    }

    static let errorCases: [(status: Int, body: String, code: String?)] = [
        (403, "<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>", "AccessDenied"),
        (404, "<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>", "NoSuchBucket"),
        (500, "<html>not xml at all", nil),
        (503, "", nil),
        (400, "<Error><Code>", nil),
        (400, "<Error><Code>\u{0}\u{7}évil</Code>", "????vil"),
    ]

    @Test(arguments: 0..<errorCases.count)
    func failuresBecomeMediaStoreErrorsWithStatusAndCode(index: Int) async throws {
        let errorCase = Self.errorCases[index]
        try await RecordingServer.with(reply: .init(status: errorCase.status, body: Array(errorCase.body.utf8))) { _, port in
            let store = store(port: port)
            let operations: [() async throws -> Void] = [
                { try await store.put("public/a.jpg", [1], contentType: "image/jpeg") },
                { _ = try await store.get("public/a.jpg") },
                { try await store.delete("public/a.jpg") },
                { try await store.move("public/a.jpg", to: "private/a.jpg") },
            ]
            for operation in operations {
                do {
                    try await operation()
                    Issue.record("status \(errorCase.status) was taken for success")
                } catch let error as MediaStoreError {
                    #expect(error.kind == .server)
                    #expect(error.status == errorCase.status)
                    #expect(error.code == errorCase.code)
                }
            }
        }
    }

    @Test func aMissingObjectIsNilAndItsDeleteIsFine() async throws {
        let body = Array("<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>".utf8)
        try await RecordingServer.with(reply: .init(status: 404, body: body)) { _, port in
            let store = store(port: port)
            #expect(try await store.get("public/a.jpg") == nil)
            try await store.delete("public/a.jpg")
        }
    }

    @Test func binaryGarbageBodiesDoNotCrash() async throws {
        for seed in 0..<20 {
            let garbage = patternBytes(seed * 37, seed: UInt64(seed)) + Array("<Error><Code>".utf8) + patternBytes(50, seed: UInt64(seed))
            try await RecordingServer.with(reply: .init(status: 500, body: garbage)) { _, port in
                do {
                    _ = try await store(port: port).get("public/a.jpg")
                    Issue.record("a garbage 500 was taken for success")
                } catch let error as MediaStoreError {
                    #expect(error.status == 500)
                }
            }
        }
    }

    @Test func aClosedPortFailsCleanlyAndFast() async throws {
        // Port 1 on loopback: nothing listens there, so the connection is refused at once.
        do {
            _ = try await store(port: 1, timeoutMilliseconds: 30_000).get("public/a.jpg")
            Issue.record("a closed port answered")
        } catch let error as MediaStoreError {
            #expect(error.kind == .transport)
            // Refused (CURLE_COULDNT_CONNECT), not timed out (curl 28).
            #expect(error.code == "curl 7")
        }
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        try await RecordingServer.with(reply: .init(silent: true)) { _, port in
            do {
                try await store(port: port, timeoutMilliseconds: 500).put("public/a.jpg", [1, 2, 3], contentType: "image/jpeg")
                Issue.record("a silent server was taken for success")
            } catch let error as MediaStoreError {
                #expect(error.kind == .transport)
                #expect(error.code == "curl 28")  // CURLE_OPERATION_TIMEDOUT
            }
        }
    }

    /// moto checks signatures in `deploy/dev test`: a wrong secret must be refused there, or the suite would not
    /// be testing libcurl's signing at all.
    @Test func theStandInRefusesAWrongSignature() async throws {
        guard let settings = S3TestSettings.fromEnvironment() else { return }
        let store = settings.store(secretAccessKey: settings.secretAccessKey + "x")
        do {
            try await store.put("public/\(MediaKey.random()).jpg", [1, 2, 3], contentType: "image/jpeg")
            Issue.record("a wrong secret was accepted: the S3 stand-in does not check signatures")
        } catch let error as MediaStoreError {
            #expect(error.kind == .server)
            #expect(error.status == 403)
            #expect(error.code == "SignatureDoesNotMatch")
        }
    }

    @Test func aMissingBucketIsAnErrorNotNil() async throws {
        guard let settings = S3TestSettings.fromEnvironment() else { return }
        var other = settings
        other.bucket = "no-such-bucket-\(MediaKey.random())"
        do {
            _ = try await other.store().get("public/a.jpg")
            Issue.record("a missing bucket read as a missing object")
        } catch let error as MediaStoreError {
            #expect(error.status == 404)
            #expect(error.code == "NoSuchBucket")
        }
    }

    @Test("against the stand-in: every object is served with Cache-Control immutable after its PUT, and keeps it through moves")
    func cacheControlOnEveryObject() async throws {
        guard let settings = S3TestSettings.fromEnvironment() else { return }
        let store = settings.store()
        let name = MediaKey.random() + ".jpg"
        let bytes = patternBytes(4096)
        func expectHeaders(_ key: String, _ when: String) async throws {
            for method in ["HEAD", "GET"] {
                let response = try await store.send(method, key)
                #expect(response.status == 200, "\(method) \(key) \(when)")
                #expect(response.header("Cache-Control") == "public, max-age=31536000, immutable", "\(method) \(key) \(when)")
                #expect(response.header("Content-Type") == "image/jpeg", "\(method) \(key) \(when)")
                if method == "GET" { #expect(response.body == bytes) }
            }
        }
        try await store.put("public/" + name, bytes, contentType: "image/jpeg")
        try await expectHeaders("public/" + name, "after the PUT")
        try await store.move("public/" + name, to: "private/" + name)
        try await expectHeaders("private/" + name, "after the move to private/")
        try await store.move("private/" + name, to: "public/" + name)
        try await expectHeaders("public/" + name, "after the move back")
        try await store.delete("public/" + name)
    }

    @Test("a PUT sends Cache-Control; a move's copy asks S3 to keep the object's metadata")
    func cacheControlIsSentAndCopied() async throws {
        try await RecordingServer.with { server, port in
            let store = store(port: port)
            try await store.put("public/abc.jpg", [1, 2, 3], contentType: "image/jpeg")
            try await store.move("public/abc.jpg", to: "private/abc.jpg")
            let requests = server.requests
            #expect(requests.first?.header("Cache-Control") == "public, max-age=31536000, immutable")
            #expect(requests.dropFirst().first?.header("x-amz-metadata-directive") == "COPY")
        }
    }
}
