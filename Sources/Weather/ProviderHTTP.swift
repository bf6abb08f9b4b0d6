import CurlClient
import Foundation

/// The outbound HTTP policy every provider shares: libcurl on its own thread pool, connect timeout 2 s,
/// total 5 s, answers of at most `maxResponseBytes` (1 MiB; a weather answer is a few KiB), and one retry after a
/// short random delay for retryable failures (transport, 5xx). The retry is one more upstream request, so it is
/// admitted against the deployment's budget first (`UpstreamAdmission`). A 429, or a 503 with `Retry-After`, is
/// never retried: it throws `.throttled` with the wait the provider asked for, and `WeatherService` holds every
/// call back for that long. An answer past the size limit is malformed, never retried: a provider streaming
/// gigabytes cannot fill the server's memory.
public struct ProviderHTTP: Sendable {
    public var client: CurlHTTPClient
    public var connectTimeoutMilliseconds: Int
    public var timeoutMilliseconds: Int
    /// The retry waits a random time in this range (jitter), in milliseconds.
    public var retryDelayMilliseconds: ClosedRange<Int>
    public var maxResponseBytes: Int = 1 << 20
    /// Observes every upstream attempt (for metrics and tests).
    public var onAttempt: (@Sendable (String) -> Void)?

    /// The total time one request may take (connect, send, answer) unless told otherwise.
    public static let defaultTimeoutMilliseconds = 5000

    /// One libcurl client for every provider of the process; its threads live as long as the process.
    public static let sharedClient = CurlHTTPClient(threads: 4)

    public init(
        client: CurlHTTPClient = ProviderHTTP.sharedClient,
        connectTimeoutMilliseconds: Int = 2000,
        timeoutMilliseconds: Int = ProviderHTTP.defaultTimeoutMilliseconds,
        retryDelayMilliseconds: ClosedRange<Int> = 100...400,
        onAttempt: (@Sendable (String) -> Void)? = nil
    ) {
        self.client = client
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.timeoutMilliseconds = timeoutMilliseconds
        self.retryDelayMilliseconds = retryDelayMilliseconds
        self.onAttempt = onAttempt
    }

    /// GETs `url` and returns the body of a 2xx answer; anything else throws `ProviderError`.
    public func get(_ url: String, admitRetry: UpstreamAdmission? = nil) async throws -> [UInt8] {
        do {
            return try await attempt(url)
        } catch let failure as ProviderError where failure.isRetryable {
            if let admitRetry {
                // Past the budget, the first failure is the answer.
                do { try await admitRetry() } catch { throw failure }
            }
            let delay = Int.random(in: retryDelayMilliseconds)
            try await Task.sleep(for: .milliseconds(delay))
            return try await attempt(url)
        }
    }

    private func attempt(_ url: String) async throws -> [UInt8] {
        onAttempt?(url)
        let response: CurlResponse
        do {
            response = try await client.send(
                CurlRequest(
                    url: url,
                    headers: [("Accept", "application/json"), ("User-Agent", "weatherboard")],
                    connectTimeoutMilliseconds: connectTimeoutMilliseconds,
                    timeoutMilliseconds: timeoutMilliseconds,
                    maxResponseBytes: maxResponseBytes
                )
            )
        } catch let error as CurlError where error.isTooLarge {
            throw ProviderError(.malformed, error.description)
        } catch let error as CurlError {
            throw ProviderError(error.isTimeout ? .timeout : .transport, error.description)
        }
        guard (200..<300).contains(response.status) else {
            let retryAfter = response.header("Retry-After").flatMap(Self.retryAfterSeconds)
            if response.status == 429 || (response.status == 503 && retryAfter != nil) {
                throw ProviderError(.throttled, "HTTP \(response.status)", retryAfterSeconds: retryAfter)
            }
            throw ProviderError(.status, "HTTP \(response.status)")
        }
        return response.body
    }

    /// A `Retry-After` value in seconds from now: delta-seconds, or an HTTP-date (RFC 9110 §10.2.3). Nil for
    /// anything else; a date in the past is 0.
    static func retryAfterSeconds(_ value: String) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.count <= 10, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Double(text)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard text.utf8.count <= 40, let date = formatter.date(from: text) else { return nil }
        return max(0, date.timeIntervalSinceNow)
    }

    /// Percent-encodes a query value.
    static func escape(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// Trims a trailing slash from a configured base URL.
    static func base(_ url: String) -> String {
        url.hasSuffix("/") ? String(url.dropLast()) : url
    }

    /// A coordinate in a URL: fixed 4 decimals (about 10 m).
    static func coordinate(_ value: Double) -> String {
        String(format: "%.4f", value)
    }
}
