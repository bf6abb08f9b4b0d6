import Database
import RateLimit

/// A rate limit counted inside the transaction that does the work it allows: the hit commits with the
/// work, and a refusal rolls the work back. Replays and repeats, decided earlier in that transaction, are
/// never counted.
public struct Admission: Sendable {
    let limiter: RateLimiter
    let policy: RateLimitPolicy
    let subject: String

    public init(_ limiter: RateLimiter, _ policy: RateLimitPolicy, subject: String) {
        self.limiter = limiter
        self.policy = policy
        self.subject = subject
    }

    func admit(on connection: PostgresConnection) throws {
        try limiter.acquire(policy, subject: subject, on: connection)
    }
}
