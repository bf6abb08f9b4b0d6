import CurlClient
import Hashing

/// Media in an S3-compatible bucket, over the project's libcurl client, signed by libcurl's own AWS SigV4
/// (`CURLOPT_AWS_SIGV4`). Path-style URLs (`ENDPOINT/BUCKET/KEY`), so any S3-compatible store works.
public struct S3MediaStore: MediaStore {
    public let endpoint: String
    public let bucket: String
    public let publicBaseURL: String
    private let signature: AWSSigV4
    private let client: CurlHTTPClient
    private let connectTimeoutMilliseconds: Int
    private let timeoutMilliseconds: Int

    /// Every object's `Cache-Control`, for whoever serves the bucket (its public URL, a CDN): keys are random and
    /// an object is never rewritten, so what a reader has cached stays right. Kept through moves (the copy keeps it).
    public static let cacheControl = "public, max-age=31536000, immutable"

    /// SHA-256 of the empty body, hex: `x-amz-content-sha256` of a GET, HEAD or DELETE.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// - Parameters:
    ///   - endpoint: `S3_ENDPOINT`, e.g. `https://s3.eu-central-1.amazonaws.com` or `http://127.0.0.1:9000`.
    ///   - httpClient: runs the transfers on its thread pool (``MediaIO``'s).
    ///   - connectTimeoutMilliseconds, timeoutMilliseconds: bounds of every request (a 16 MiB upload fits in
    ///     the default 30 s at about 4 Mbit/s).
    public init(
        endpoint: String,
        bucket: String,
        region: String,
        accessKeyID: String,
        secretAccessKey: String,
        publicBaseURL: String,
        httpClient: CurlHTTPClient,
        connectTimeoutMilliseconds: Int = 2000,
        timeoutMilliseconds: Int = 30_000
    ) {
        var endpoint = Substring(endpoint)
        while endpoint.hasSuffix("/") { endpoint = endpoint.dropLast() }
        self.endpoint = String(endpoint)
        self.bucket = bucket
        self.publicBaseURL = publicBaseURL
        self.signature = AWSSigV4(region: region, service: "s3", accessKeyID: accessKeyID, secretAccessKey: secretAccessKey)
        self.client = httpClient
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    public func put(_ key: String, _ bytes: [UInt8], contentType: String) async throws {
        try MediaKey.validate(key)
        let response = try await send("PUT", key, body: bytes, headers: [("Content-Type", contentType), ("Cache-Control", Self.cacheControl)])
        guard response.status == 200 else { throw Self.failure(response, key: key) }
    }

    public func get(_ key: String) async throws -> [UInt8]? {
        try MediaKey.validate(key)
        let response = try await send("GET", key)
        switch response.status {
        case 200: return response.body
        case 404 where Self.isMissingObject(response): return nil
        default: throw Self.failure(response, key: key)
        }
    }

    public func delete(_ key: String) async throws {
        try MediaKey.validate(key)
        let response = try await send("DELETE", key)
        switch response.status {
        case 200, 204: return
        case 404 where Self.isMissingObject(response): return
        default: throw Self.failure(response, key: key)
        }
    }

    /// A server-side copy (`x-amz-copy-source`) that keeps the object's `Content-Type` and `Cache-Control`
    /// (`x-amz-metadata-directive: COPY`, S3's default, said explicitly), then a delete of the source.
    public func move(_ from: String, to: String) async throws {
        try MediaKey.validate(from)
        try MediaKey.validate(to)
        if from == to {
            guard try await exists(from) else { throw MediaStoreError(.notFound, key: from, message: "no such object") }
            return
        }
        let copy = try await send("PUT", to, body: [], headers: [("x-amz-copy-source", "/\(bucket)/\(from)"), ("x-amz-metadata-directive", "COPY")])
        switch copy.status {
        // S3 may answer a copy with 200 and an error in the body.
        case 200 where S3ErrorBody(copy.body) == nil:
            break
        case 404 where Self.isMissingObject(copy):
            // Gone already: done if the destination is there (a repeated move), else there was nothing to move.
            guard try await exists(to) else { throw MediaStoreError(.notFound, key: from, message: "no such object") }
            return
        default:
            throw Self.failure(copy, key: from)
        }
        try await delete(from)
    }

    public func publicURL(for key: String) -> String {
        Self.join(publicBaseURL, key)
    }

    // MARK: Requests

    func exists(_ key: String) async throws -> Bool {
        let response = try await send("HEAD", key)
        switch response.status {
        case 200: return true
        case 404: return false  // a HEAD answer has no body to tell a missing bucket from a missing key
        default: throw Self.failure(response, key: key)
        }
    }

    func url(for key: String) -> String { "\(endpoint)/\(bucket)/\(key)" }

    func send(_ method: String, _ key: String, body: [UInt8]? = nil, headers: [(String, String)] = []) async throws -> CurlResponse {
        let payloadHash = body.map { $0.isEmpty ? Self.emptyPayloadHash : Hex.encode(Digest.sha256($0)) } ?? Self.emptyPayloadHash
        let request = CurlRequest(
            method: method,
            url: url(for: key),
            headers: headers + [("x-amz-content-sha256", payloadHash)],
            body: body,
            connectTimeoutMilliseconds: connectTimeoutMilliseconds,
            timeoutMilliseconds: timeoutMilliseconds,
            awsSigV4: signature
        )
        do {
            return try await client.send(request)
        } catch let error as CurlError {
            throw MediaStoreError(.transport, key: key, code: "curl \(error.code)", message: error.message)
        }
    }

    /// A 404 for the object itself (`NoSuchKey`, or no parsable body), not for a missing bucket.
    private static func isMissingObject(_ response: CurlResponse) -> Bool {
        guard let error = S3ErrorBody(response.body) else { return true }
        return error.code == nil || error.code == "NoSuchKey"
    }

    private static func failure(_ response: CurlResponse, key: String) -> MediaStoreError {
        let error = S3ErrorBody(response.body)
        return MediaStoreError(
            .server,
            key: key,
            status: response.status,
            code: error?.code,
            message: error?.message ?? "HTTP \(response.status)"
        )
    }
}
