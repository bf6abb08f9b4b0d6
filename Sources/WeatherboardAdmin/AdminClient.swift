import CurlClient
import Foundation
import WeatherboardAPI

/// The server's HTTP API over libcurl, with JSON in and out and the contract's errors mapped to
/// one-line `AdminError`s. Transfers block a thread of the client's own pool, never the cooperative pool.
struct AdminClient: Sendable {
    /// The base URL without a trailing slash, e.g. `http://127.0.0.1:8080`.
    let server: String
    let token: String?
    /// For the "log in again" hint.
    let username: String?

    private static let http = CurlHTTPClient(threads: 1)

    init(server: String, token: String?, username: String?) throws {
        self.server = try Self.normalize(server: server)
        self.token = token
        self.username = username
    }

    /// Checks the URL's shape and drops trailing slashes.
    static func normalize(server: String) throws -> String {
        var url = server.trimmingCharacters(in: .whitespaces)
        while url.hasSuffix("/") { url.removeLast() }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
            components.query == nil, components.fragment == nil
        else {
            throw AdminError(.usage, "invalid server URL \(server.debugDescription): expected http://HOST[:PORT] or https://HOST[:PORT]")
        }
        return url
    }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    /// A path segment made of an opaque id (never lets `/`, `?` or `#` through).
    static func segment(_ id: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return id.addingPercentEncoding(withAllowedCharacters: allowed) ?? id
    }

    // MARK: Calls

    /// GET, decoded; also returns the raw body for `--json`.
    func get<T: Decodable>(_ path: String, query: [(String, String)] = [], as type: T.Type) async throws -> (T, [UInt8]) {
        let response = try await send("GET", path, query: query)
        return (try decode(type, response, path: path), response.body)
    }

    /// A call with an optional JSON body, decoded.
    func call<T: Decodable>(_ method: String, _ path: String, body: (some Encodable & Sendable)? = Optional<Empty>.none, as type: T.Type) async throws -> T {
        let response = try await send(method, path, body: body)
        return try decode(type, response, path: path)
    }

    /// A call whose reply has no body we need (204).
    func call(_ method: String, _ path: String) async throws {
        _ = try await send(method, path, body: Optional<Empty>.none)
    }

    struct Empty: Codable, Sendable {}

    func send(_ method: String, _ path: String, query: [(String, String)] = [], body: (some Encodable & Sendable)? = Optional<Empty>.none) async throws -> CurlResponse {
        var url = server + path
        if !query.isEmpty {
            // RFC 3986's unreserved characters only (`alphanumerics` holds every script's letters: 파전 went out raw).
            let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
            url += "?" + query.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.1)" }.joined(separator: "&")
        }
        var headers: [(String, String)] = [("Accept", "application/json"), ("User-Agent", "weatherboard-admin")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        var bytes: [UInt8]? = nil
        if let body {
            headers.append(("Content-Type", "application/json"))
            bytes = [UInt8](try Self.encoder.encode(body))
        }
        let request = CurlRequest(
            method: method, url: url, headers: headers, body: bytes, connectTimeoutMilliseconds: 5_000, timeoutMilliseconds: 30_000
        )
        let response: CurlResponse
        do {
            response = try await Self.http.send(request)
        } catch let error as CurlError {
            throw AdminError(.unreachable, "cannot reach \(server): \(error.message)")
        } catch {
            throw AdminError(.unreachable, "cannot reach \(server): \(error)")
        }
        guard (200..<300).contains(response.status) else { throw mapError(response, method: method, path: path) }
        return response
    }

    /// Opens an event stream (CONTRACT §11) and returns once the server answers 2xx, resuming after `lastEventID`
    /// when given. The transfer has no total timeout; its body arrives as the server sends it. Other answers throw:
    /// `StreamUnavailable` for those worth trying again later (429, 5xx), else the one-line `AdminError` of any call
    /// (401: session expired, 403: forbidden, …); `AdminError(.unreachable)` when there is no answer.
    func openStream(_ path: String, lastEventID: String) async throws -> CurlStreamingResponse {
        var headers: [(String, String)] = [("Accept", "text/event-stream"), ("Cache-Control", "no-cache"), ("User-Agent", "weatherboard-admin")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        if !lastEventID.isEmpty { headers.append(("Last-Event-ID", lastEventID)) }
        let request = CurlRequest(method: "GET", url: server + path, headers: headers, connectTimeoutMilliseconds: 5_000)
        let response: CurlStreamingResponse
        do {
            response = try await Self.http.stream(request)
        } catch let error as CurlError {
            throw AdminError(.unreachable, "cannot reach \(server): \(error.message)")
        }
        guard (200..<300).contains(response.status) else {
            // An error reply is the usual small JSON; a stream that will not end is cut at 64 KiB.
            let body = (try? await response.body.collect(upTo: 64 << 10)) ?? []
            let error = mapError(CurlResponse(status: response.status, headers: response.headers, body: body), method: "GET", path: path)
            if response.status == 429 || response.status >= 500 {
                throw StreamUnavailable(message: error.message, retryAfterSeconds: response.header("Retry-After").flatMap { Int($0) })
            }
            throw error
        }
        return response
    }

    private func decode<T: Decodable>(_ type: T.Type, _ response: CurlResponse, path: String) throws -> T {
        do {
            return try Self.decoder.decode(type, from: Data(response.body))
        } catch {
            throw AdminError(.server, "unexpected reply from \(server)\(path) (HTTP \(response.status)): not the expected JSON")
        }
    }

    /// The contract's `{"error": {"code", "message"}}` as one line.
    private func mapError(_ response: CurlResponse, method: String, path: String) -> AdminError {
        let detail = (try? Self.decoder.decode(ErrorResponse.self, from: Data(response.body)))?.error
        let message = detail?.message ?? "HTTP \(response.status) for \(method) \(server)\(path)"
        switch response.status {
        case 401 where token != nil:
            return .sessionExpired(server: server, username: username)
        case 401:
            return AdminError(.server, message)
        case 403:
            return AdminError(.forbidden, message)
        case 404:
            return AdminError(.notFound, detail == nil ? "not found: \(server)\(path)" : message)
        case 429:
            let wait = response.header("Retry-After").map { ": retry in \($0) s" } ?? ""
            return AdminError(.server, "\(message)\(wait)")
        default:
            let code = detail.map { " (\($0.code))" } ?? ""
            return AdminError(.server, "\(message)\(code)")
        }
    }
}

/// A stream the server cannot open now (429 past the streams per client, 503 while draining or full, another 5xx):
/// worth opening again, after `Retry-After` when the server sent it.
struct StreamUnavailable: Error, Sendable {
    var message: String
    var retryAfterSeconds: Int?
}
