/// The subject is at its limit: nothing was counted. `retryAfterSeconds` is when its oldest hit leaves
/// the window (at least 1).
public struct RateLimitExceeded: Error, Sendable, Equatable {
    public let retryAfterSeconds: Int

    public init(retryAfterSeconds: Int) {
        self.retryAfterSeconds = retryAfterSeconds
    }
}
