/// Why current weather could not be had.
public enum WeatherError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No region has this id.
    case unknownRegion(Int)
    /// Nothing is cached and the provider failed (or is `none`, or its circuit is open): 503 `weather_unavailable`.
    case unavailable(String)

    public var description: String {
        switch self {
        case .unknownRegion(let id): return "unknown region \(id)"
        case .unavailable(let reason): return "weather unavailable: \(reason)"
        }
    }
}

/// A provider call that failed: transport, HTTP status, or a body we could not read.
public struct ProviderError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case transport, timeout, status, malformed, unsupportedRegion, misconfigured
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
