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
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// Worth one more try (a network hiccup or a 5xx/429), as opposed to an answer that will not change.
    var isRetryable: Bool {
        kind == .transport || kind == .timeout || (kind == .status && (message.hasPrefix("HTTP 5") || message.hasPrefix("HTTP 429")))
    }

    public var description: String { "\(kind): \(message)" }
}
