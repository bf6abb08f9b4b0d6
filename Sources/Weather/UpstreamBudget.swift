/// Who asks for weather, for the upstream budget (CONTRACT §6).
public struct WeatherRequester: Sendable, Hashable {
    /// The client address as the server computes it for rate limits; nil for the server's own calls, which no
    /// per-client limit applies to. A refusal by the per-client limit is `WeatherError.rateLimited`: 429 on the
    /// weather and feed routes, `null` for that region with `include=weather` on lists (lists never answer 429).
    public var clientAddress: String?

    public init(clientAddress: String?) {
        self.clientAddress = clientAddress
    }

    /// The server itself (tests, operator tasks): only the deployment-wide budget applies.
    public static let server = WeatherRequester(clientAddress: nil)
}

/// Why an upstream call may not happen now.
public enum UpstreamRefusal: Error, Sendable, Equatable {
    /// The client's cold requests reached `WEATHER_COLD_PER_MINUTE`: 429 `rate_limited`.
    case clientLimit(retryAfterSeconds: Int)
    /// The deployment's upstream calls reached `WEATHER_UPSTREAM_PER_MINUTE`: the stale value, or 503.
    case deploymentBudget(retryAfterSeconds: Int)
}

/// Upstream calls are a budget, not a consequence of traffic (CONTRACT §6). `WeatherService` asks once for each
/// upstream call it is about to make — never for a cache hit (memory or `weather_cache`), a request that joins an
/// in-flight refresh, or while the circuit breaker holds calls back — so only requests that really cost a call
/// are counted.
public protocol UpstreamBudget: Sendable {
    /// Counts one upstream call for `requester`, or throws `UpstreamRefusal` having counted nothing. Any other
    /// error (the counter's database failing) is treated like a provider failure.
    func admit(_ requester: WeatherRequester) async throws
}
