import Database
import Foundation

/// Fixed-window counters in the `rate_limits` table, so every server process sharing the database
/// enforces the same limits.
public struct PostgresRateLimiter: RateLimiter {
    let database: PostgresPool

    public init(database: PostgresPool) {
        self.database = database
    }

    public func hit(_ policy: RateLimitPolicy, subject: String) async throws {
        let (bucket, windowStart, windowEnd) = Self.window(policy, subject: subject)
        let hits = try await database.query(
            """
            INSERT INTO rate_limits AS r (bucket, window_start, hits) VALUES (\(bucket), \(windowStart), 1)
            ON CONFLICT (bucket) DO UPDATE SET
                hits = CASE WHEN r.window_start = EXCLUDED.window_start THEN r.hits + 1 ELSE 1 END,
                window_start = EXCLUDED.window_start
            RETURNING hits
            """
        )[0].decode(Int.self, "hits")
        if hits > policy.limit {
            throw BoardError.rateLimited(retryAfterSeconds: Self.retryAfter(windowEnd))
        }
    }

    public func check(_ policy: RateLimitPolicy, subject: String) async throws {
        let (bucket, windowStart, windowEnd) = Self.window(policy, subject: subject)
        let rows = try await database.query("SELECT hits FROM rate_limits WHERE bucket = \(bucket) AND window_start = \(windowStart)")
        if let hits = try rows.first?.decode(Int.self, "hits"), hits >= policy.limit {
            throw BoardError.rateLimited(retryAfterSeconds: Self.retryAfter(windowEnd))
        }
    }

    static func window(_ policy: RateLimitPolicy, subject: String) -> (String, Date, Date) {
        let now = Int(Date().timeIntervalSince1970)
        let start = now - now % policy.windowSeconds
        return (
            "\(policy.name):\(subject)",
            Date(timeIntervalSince1970: Double(start)),
            Date(timeIntervalSince1970: Double(start + policy.windowSeconds))
        )
    }

    static func retryAfter(_ windowEnd: Date) -> Int {
        max(1, Int(windowEnd.timeIntervalSinceNow.rounded(.up)))
    }
}
