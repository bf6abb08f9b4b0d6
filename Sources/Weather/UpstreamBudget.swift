import Database
import RateLimit

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
/// observation it is about to fetch — never for a cache hit (memory or `weather_cache`), a request that joins an
/// in-flight refresh, or while the circuit breaker holds calls back — so only requests that really cost a call
/// are counted. The deployment's budget counts HTTP requests: all of an observation's at once (KMA sends two), and
/// a retry when it is about to go out.
public protocol UpstreamBudget: Sendable {
    /// Counts one cold request for `requester` and `requests` upstream HTTP requests for the deployment, or throws
    /// `UpstreamRefusal` having counted nothing. Any other error (the counter's database failing) is treated like a
    /// provider failure.
    func admit(_ requester: WeatherRequester, requests: Int) async throws
    /// Counts one more upstream HTTP request for the deployment (a retry), or throws
    /// `UpstreamRefusal.deploymentBudget` having counted nothing.
    func admitRetry() async throws
}

/// The production budget: two sliding-window limits in PostgreSQL (`RateLimit`), so every instance shares them.
/// - `weather-cold`, per client address: `coldPerMinute` requests a minute that need an upstream call
///   (`WEATHER_COLD_PER_MINUTE`); off with `RATE_LIMITS=off`, like every per-client limit.
/// - `weather-upstream`, one bucket for the deployment: `upstreamPerMinute` upstream HTTP requests a minute
///   (`WEATHER_UPSTREAM_PER_MINUTE`). It is the provider's quota, not a client limit, so it always applies. An
///   observation's requests are taken together, in one statement, or none is (with KMA, which needs two, a limit
///   of 1 admits nothing).
/// The client's hit is counted first (an abusive client is refused without touching the shared budget) and given
/// back when the deployment's budget then refuses, since no call was made for it.
public struct RateLimitedUpstreamBudget: UpstreamBudget {
    public let cold: RateLimitPolicy
    public let upstream: RateLimitPolicy
    let clientLimiter: RateLimiter
    let deploymentLimiter: RateLimiter
    /// The deployment bucket's subject; tests give each server its own.
    let scope: String

    public init(
        database: PostgresPool, coldPerMinute: Int, upstreamPerMinute: Int, clientLimitsEnabled: Bool = true,
        windowSeconds: Int = 60, scope: String = "deployment"
    ) {
        self.cold = RateLimitPolicy(name: "weather-cold", limit: coldPerMinute, windowSeconds: windowSeconds)
        self.upstream = RateLimitPolicy(name: "weather-upstream", limit: upstreamPerMinute, windowSeconds: windowSeconds)
        self.clientLimiter = RateLimiter(database: database, enabled: clientLimitsEnabled)
        self.deploymentLimiter = RateLimiter(database: database)
        self.scope = scope
    }

    public func admit(_ requester: WeatherRequester, requests: Int) async throws {
        var clientPermit: RateLimitPermit?
        if let client = requester.clientAddress {
            do {
                clientPermit = try await clientLimiter.acquire(cold, subject: client)
            } catch let exceeded as RateLimitExceeded {
                throw UpstreamRefusal.clientLimit(retryAfterSeconds: exceeded.retryAfterSeconds)
            }
        }
        do {
            try await deploymentLimiter.acquire(upstream, subject: scope, hits: requests)
        } catch {
            if let clientPermit { await clientLimiter.giveBack(clientPermit) }
            if let exceeded = error as? RateLimitExceeded {
                throw UpstreamRefusal.deploymentBudget(retryAfterSeconds: exceeded.retryAfterSeconds)
            }
            throw error
        }
    }

    public func admitRetry() async throws {
        do {
            try await deploymentLimiter.acquire(upstream, subject: scope)
        } catch let exceeded as RateLimitExceeded {
            throw UpstreamRefusal.deploymentBudget(retryAfterSeconds: exceeded.retryAfterSeconds)
        }
    }
}
