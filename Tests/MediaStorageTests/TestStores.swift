import CurlClient
import Foundation
import MediaStorage
import Testing

/// The two stores the behaviour suite runs against.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case local
    case s3

    var testDescription: String { rawValue }
}

/// The S3 stand-in started by `deploy/dev test` (moto, with signature checks on).
struct S3TestSettings: Sendable {
    var endpoint: String
    var bucket: String
    var region: String
    var accessKeyID: String
    var secretAccessKey: String

    /// `nil`, with a recorded issue (a failure, not a skip), when `deploy/dev test` did not set the variables.
    static func fromEnvironment() -> S3TestSettings? {
        let environment = ProcessInfo.processInfo.environment
        func value(_ name: String) -> String? {
            guard let v = environment["WEATHERBOARD_TEST_S3_\(name)"], !v.isEmpty else { return nil }
            return v
        }
        guard let endpoint = value("ENDPOINT"), let bucket = value("BUCKET"), let key = value("ACCESS_KEY_ID"),
            let secret = value("SECRET_ACCESS_KEY")
        else {
            Issue.record("WEATHERBOARD_TEST_S3_ENDPOINT/_BUCKET/_ACCESS_KEY_ID/_SECRET_ACCESS_KEY are not set: run the tests with `deploy/dev test` (or `deploy/dev s3-standin`)")
            return nil
        }
        return S3TestSettings(endpoint: endpoint, bucket: bucket, region: value("REGION") ?? "us-east-1", accessKeyID: key, secretAccessKey: secret)
    }

    func store(secretAccessKey: String? = nil, timeoutMilliseconds: Int = 30_000) -> S3MediaStore {
        S3MediaStore(
            endpoint: endpoint,
            bucket: bucket,
            region: region,
            accessKeyID: accessKeyID,
            secretAccessKey: secretAccessKey ?? self.secretAccessKey,
            publicBaseURL: "https://media.example.test/",
            httpClient: testIO.httpClient,
            timeoutMilliseconds: timeoutMilliseconds
        )
    }
}

/// The stores' threads for the whole test process, as a server has one `MediaIO`.
let testIO = MediaIO()

/// A fresh temporary directory, removed afterwards.
func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("wb-media-\(MediaKey.random())").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

/// Runs `body` against a store of `kind`: a new directory for `local`, the shared test bucket for `s3` (tests use
/// random keys, so they do not collide there). Records an issue, and does not run `body`, if S3 is not configured.
func withStore(_ kind: StoreKind, _ body: (any MediaStore) async throws -> Void) async throws {
    switch kind {
    case .local:
        try await withTemporaryDirectory { directory in
            try await body(LocalMediaStore(directory: directory + "/media", publicBaseURL: "http://127.0.0.1:8080/media/", threadPool: testIO.threadPool))
        }
    case .s3:
        guard let settings = S3TestSettings.fromEnvironment() else { return }
        try await body(settings.store())
    }
}

/// `count` bytes from a fixed generator, so a failure is reproducible.
func patternBytes(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
    var state = seed
    var out = [UInt8]()
    out.reserveCapacity(count)
    for _ in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        out.append(UInt8(truncatingIfNeeded: state >> 56))
    }
    return out
}

extension MediaStoreError.Kind {
    /// For `#expect(throws:)` checks on the kind alone.
    func matches(_ error: any Error) -> Bool {
        (error as? MediaStoreError)?.kind == self
    }
}
