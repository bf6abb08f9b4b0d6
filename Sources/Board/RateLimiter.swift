/// A limit: at most `limit` hits per `windowSeconds` for one subject (a client IP, an account, a username).
public struct RateLimitPolicy: Sendable, Equatable {
    public var name: String
    public var limit: Int
    public var windowSeconds: Int

    public init(name: String, limit: Int, windowSeconds: Int) {
        self.name = name
        self.limit = limit
        self.windowSeconds = windowSeconds
    }

    /// Anonymous accounts per client IP: 30 an hour (carrier NAT puts many phones behind one address).
    public static let accountCreation = RateLimitPolicy(name: "account-create", limit: 30, windowSeconds: 3600)
    /// Failed logins per username: 10 per 15 minutes.
    public static let failedLoginPerUsername = RateLimitPolicy(name: "login-fail-user", limit: 10, windowSeconds: 900)
    /// Failed logins per client IP: 50 per 15 minutes.
    public static let failedLoginPerIP = RateLimitPolicy(name: "login-fail-ip", limit: 50, windowSeconds: 900)
    /// Posts by an anonymous account: 3 per 10 minutes (Lemmy allows 6 per 10 minutes for everyone;
    /// Discourse holds new users to fewer).
    public static let anonymousPosting = RateLimitPolicy(name: "post-anon", limit: 3, windowSeconds: 600)
    /// Posts by a registered account: 10 per 10 minutes.
    public static let registeredPosting = RateLimitPolicy(name: "post", limit: 10, windowSeconds: 600)
    /// Reports by one account: 20 an hour.
    public static let reporting = RateLimitPolicy(name: "report", limit: 20, windowSeconds: 3600)
}

/// Shared counters. `hit` counts and refuses past the limit; `check` only looks.
public protocol RateLimiter: Sendable {
    /// Counts one hit; throws `BoardError.rateLimited` when this hit is over the limit.
    func hit(_ policy: RateLimitPolicy, subject: String) async throws
    /// Throws `BoardError.rateLimited` when the subject is already at the limit, without counting.
    func check(_ policy: RateLimitPolicy, subject: String) async throws
}

/// `RATE_LIMITS=off`: for load tests and bulk imports.
public struct UnlimitedRateLimiter: RateLimiter {
    public init() {}
    public func hit(_ policy: RateLimitPolicy, subject: String) async throws {}
    public func check(_ policy: RateLimitPolicy, subject: String) async throws {}
}
