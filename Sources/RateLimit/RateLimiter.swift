import Database
import Foundation
import Hashing

/// Sliding-window limits over the `rate_limits` table (sql/0014_rate_limits.sql).
///
/// A bucket holds the times of its hits inside the window. `acquire` drops the hits that left the window,
/// and appends this one only while fewer than `limit` remain, all in one `INSERT … ON CONFLICT DO UPDATE`:
/// PostgreSQL locks the bucket's row for the update and evaluates the condition on its newest version, so
/// parallel requests are counted one after another and exactly `limit` of any burst get through, in any
/// window of `windowSeconds` (no fixed window edge to double up on).
public struct RateLimiter: Sendable {
    let database: PostgresPool?

    /// `enabled: false` is `RATE_LIMITS=off` (load tests, bulk imports): nothing is counted or refused.
    public init(database: PostgresPool, enabled: Bool = true) {
        self.database = enabled ? database : nil
    }

    /// A limiter that never refuses.
    public static let unlimited = RateLimiter(pool: nil)

    private init(pool: PostgresPool?) {
        self.database = pool
    }

    public var isEnabled: Bool { database != nil }

    /// Counts `hits` hits (one by default) all together, or throws `RateLimitExceeded` (counting nothing) when
    /// fewer than `hits` are left under the subject's limit. More hits than the limit are always refused.
    @discardableResult
    public func acquire(_ policy: RateLimitPolicy, subject: String, hits: Int = 1) async throws -> RateLimitPermit {
        guard let database else { return .uncounted }
        let bucket = Self.bucket(policy, subject: subject)
        let hits = max(1, hits)
        let rows = try await database.query(Self.acquireQuery(policy, bucket: bucket, hits: hits))
        if Self.needsReread(rows) {
            return try Self.permit(from: rows, bucket: bucket, hits: hits, reread: await database.query(Self.oldestHitQuery(policy, bucket: bucket)))
        }
        return try Self.permit(from: rows, bucket: bucket, hits: hits)
    }

    /// `acquire` inside a caller's transaction: the hit commits or rolls back with the work it allows, and
    /// the bucket stays locked until then.
    @discardableResult
    public func acquire(_ policy: RateLimitPolicy, subject: String, on connection: PostgresConnection) throws -> RateLimitPermit {
        guard isEnabled else { return .uncounted }
        let bucket = Self.bucket(policy, subject: subject)
        let rows = try connection.query(Self.acquireQuery(policy, bucket: bucket))
        if Self.needsReread(rows) {
            return try Self.permit(from: rows, bucket: bucket, reread: connection.query(Self.oldestHitQuery(policy, bucket: bucket)))
        }
        return try Self.permit(from: rows, bucket: bucket)
    }

    /// Returns counted hits. Best effort: a failure only leaves the hits counted until they expire.
    public func giveBack(_ permit: RateLimitPermit) async {
        guard let database, let bucket = permit.bucket else { return }
        for _ in 0..<permit.hits {
            guard (try? await database.execute(
                """
                UPDATE rate_limits
                SET hits = hits[:array_position(hits, \(permit.microseconds)) - 1] || hits[array_position(hits, \(permit.microseconds)) + 1:]
                WHERE bucket = \(bucket) AND \(permit.microseconds) = ANY(hits)
                """
            )) != nil else { return }
        }
    }

    /// The hits of a subject now in the window (for tests and operators).
    public func count(_ policy: RateLimitPolicy, subject: String) async throws -> Int {
        guard let database else { return 0 }
        let rows = try await database.query(
            """
            SELECT count(*) AS n FROM rate_limits r, unnest(r.hits) h
            WHERE r.bucket = \(Self.bucket(policy, subject: subject))
              AND h > (extract(epoch FROM now()) * 1000000)::int8 - \(Int64(policy.windowSeconds) * 1_000_000)
            """
        )
        return try rows.first?.decode(Int.self, "n") ?? 0
    }

    /// Deletes up to `batchSize` buckets whose window has passed (the background purger runs it).
    public static func purgeStatement(batchSize: Int) -> SQLQuery {
        """
        DELETE FROM rate_limits WHERE bucket IN (
            SELECT bucket FROM rate_limits WHERE expires_at < now() LIMIT \(batchSize))
          AND expires_at < now()
        """
    }

    /// `name:subject`; a long or unusual subject (a username as typed) is replaced by its SHA-256, so a
    /// bucket key is short and plain whatever a client sends.
    static func bucket(_ policy: RateLimitPolicy, subject: String) -> String {
        let plain = subject.utf8.count <= 64 && subject.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
        return "\(policy.name):" + (plain ? subject : "sha256:" + Digest.sha256Hex(subject))
    }

    /// One statement decides and counts `hits` hits; the outer SELECT also reads the oldest hit still in the
    /// window for `Retry-After` when they were refused (with several hits, the earliest time any room frees).
    static func acquireQuery(_ policy: RateLimitPolicy, bucket: String, hits: Int = 1) -> SQLQuery {
        let window = Int64(max(1, policy.windowSeconds)) * 1_000_000
        return """
            WITH c AS (SELECT (extract(epoch FROM now()) * 1000000)::int8 AS now),
            hit AS (
                INSERT INTO rate_limits AS r (bucket, hits, expires_at)
                SELECT \(bucket), array_fill(c.now, ARRAY[\(hits)]::int4[]), now() + make_interval(secs => \(Double(policy.windowSeconds))) FROM c
                WHERE \(policy.limit) >= \(hits)
                ON CONFLICT (bucket) DO UPDATE
                SET hits = ARRAY(SELECT h FROM unnest(r.hits) h WHERE h > (SELECT now FROM c) - \(window)) || array_fill((SELECT now FROM c), ARRAY[\(hits)]::int4[]),
                    expires_at = EXCLUDED.expires_at
                WHERE (SELECT count(*) FROM unnest(r.hits) h WHERE h > (SELECT now FROM c) - \(window)) + \(hits) <= \(policy.limit)
                RETURNING 1 AS counted
            )
            SELECT (SELECT now FROM c) AS now, EXISTS (SELECT 1 FROM hit) AS counted,
                   (SELECT min(h) FROM rate_limits r, unnest(r.hits) h WHERE r.bucket = \(bucket) AND h > (SELECT now FROM c) - \(window)) + \(window) AS frees_at
            """
    }

    /// A refusal whose statement could not see the bucket's row: the statement's snapshot predates the row, which
    /// another transaction created while this one waited on it (the first hits of a burst). Its lock was taken
    /// and the count is right; only the time the oldest hit leaves the window must be read again.
    static func needsReread(_ rows: PostgresRows) -> Bool {
        guard let row = rows.first else { return false }
        return (try? row.decode(Bool.self, "counted")) == false && (try? row.decode(Int64?.self, "frees_at")) == .some(nil)
    }

    /// The oldest hit still in the window plus the window, read with a fresh snapshot (a statement of its own).
    static func oldestHitQuery(_ policy: RateLimitPolicy, bucket: String) -> SQLQuery {
        let window = Int64(max(1, policy.windowSeconds)) * 1_000_000
        return """
            SELECT (SELECT min(h) FROM rate_limits r, unnest(r.hits) h
                    WHERE r.bucket = \(bucket) AND h > (extract(epoch FROM now()) * 1000000)::int8 - \(window)) + \(window) AS frees_at
            """
    }

    static func permit(from rows: PostgresRows, bucket: String, hits: Int = 1, reread: PostgresRows? = nil) throws -> RateLimitPermit {
        guard let row = rows.first else { throw RateLimitExceeded(retryAfterSeconds: 1) }
        let now = try row.decode(Int64.self, "now")
        if try row.decode(Bool.self, "counted") {
            return RateLimitPermit(bucket: bucket, microseconds: now, hits: hits)
        }
        let freesAt = try (reread?.first?.decode(Int64?.self, "frees_at") ?? row.decode(Int64?.self, "frees_at")) ?? now
        let (wait, overflow) = freesAt.subtractingReportingOverflow(now)
        let seconds = overflow ? 1 : Int((max(0, wait) + 999_999) / 1_000_000)
        throw RateLimitExceeded(retryAfterSeconds: max(1, seconds))
    }
}
