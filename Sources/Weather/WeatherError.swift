/// Why current weather could not be had.
public enum WeatherError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No region has this id.
    case unknownRegion(Int)
    /// Nothing is cached and the provider failed (or is `none`, or its circuit is open, or the deployment's upstream
    /// budget is spent): 503 `weather_unavailable`, with `Retry-After` when `retryAfterSeconds` says when to.
    case unavailable(String, retryAfterSeconds: Int? = nil)
    /// The request needs an upstream call and its client is at `WEATHER_COLD_PER_MINUTE`: 429 `rate_limited`.
    case rateLimited(retryAfterSeconds: Int)

    public var description: String {
        switch self {
        case .unknownRegion(let id): return "unknown region \(id)"
        case .unavailable(let reason, _): return "weather unavailable: \(reason)"
        case .rateLimited(let seconds): return "too many requests for uncached weather; try again in \(seconds) s"
        }
    }
}

/// A provider call that failed: transport, HTTP status, or a body we could not read.
public struct ProviderError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case transport, timeout, status, malformed, unsupportedRegion, misconfigured
        /// A readable answer with a missing, non-finite or implausible value (`Plausible`).
        case implausible
        /// The provider asked to be left alone for a while: a 429, or a 503 with `Retry-After`.
        case throttled
    }

    public var kind: Kind
    public var message: String
    /// A `.throttled` answer's `Retry-After`, in seconds from the answer; nil when it gave none (or none readable).
    public var retryAfterSeconds: Double?

    public init(_ kind: Kind, _ message: String, retryAfterSeconds: Double? = nil) {
        self.kind = kind
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// Worth one more try at once (a network hiccup or a 5xx without `Retry-After`), as opposed to an answer that
    /// will not change. A throttled answer is never retried at once: the provider said when.
    var isRetryable: Bool {
        kind == .transport || kind == .timeout || (kind == .status && message.hasPrefix("HTTP 5"))
    }

    public var description: String { "\(kind): \(message)" }
}
