import Database
import Foundation
import RateLimit

/// What expires, purged in the background (CONTRACT §7): idempotency keys after 24 h, rate-limit buckets
/// whose window passed, revoked sessions, and the snapshots of resolved reports `evidenceDays` after
/// resolution. One instance at a time: a pass runs only while it holds a PostgreSQL advisory lock, so
/// several servers sharing a database take turns instead of doing the work twice.
public struct Purger: Sendable {
    public struct Policy: Sendable {
        /// `REPORT_EVIDENCE_DAYS`: resolved reports keep their snapshot this long.
        public var evidenceDays: Int
        /// Idempotency keys live this long (a replay after it makes a new resource).
        public var idempotencyHours: Int = 24
        /// Revoked sessions stay this long (for an operator looking at a recent logout), then go.
        public var revokedSessionHours: Int = 24
        /// Rows per statement, so no pass holds many row locks or one long statement.
        public var batchSize: Int = 5000

        public init(evidenceDays: Int = 180) {
            self.evidenceDays = evidenceDays
        }
    }

    /// Rows removed (or, for evidence, erased) by one pass, by kind.
    public struct Pass: Sendable, Equatable {
        /// False when another instance held the lock: this one did nothing.
        public var ran: Bool
        public var counts: [String: Int]

        public init(ran: Bool, counts: [String: Int]) {
            self.ran = ran
            self.counts = counts
        }
    }

    /// The advisory lock key: any constant the rest of the application does not use.
    static let lockKey: Int64 = 0x7762_7075_7267_6572  // "wbpurger"

    let database: PostgresPool
    public let policy: Policy

    public init(database: PostgresPool, policy: Policy) {
        self.database = database
        self.policy = policy
    }

    /// One pass over every kind, each in batches until nothing is left.
    public func runOnce() async throws -> Pass {
        try await database.withConnection { connection in
            let locked = try connection.query("SELECT pg_try_advisory_lock(\(Self.lockKey)) AS locked")
            guard try locked.first?.decode(Bool.self, "locked") == true else { return Pass(ran: false, counts: [:]) }
            defer { _ = try? connection.query("SELECT pg_advisory_unlock(\(Self.lockKey)) AS unlocked") }
            var counts: [String: Int] = [:]
            for (kind, statement) in statements() {
                var total = 0
                while true {
                    let n = try connection.execute(statement)
                    total += n
                    if n < policy.batchSize { break }
                }
                counts[kind] = total
            }
            return Pass(ran: true, counts: counts)
        }
    }

    /// Each statement touches at most `batchSize` rows, found through an index on its expiry column.
    func statements() -> [(String, SQLQuery)] {
        let batch = policy.batchSize
        return [
            (
                "idempotency_keys",
                """
                DELETE FROM idempotency_keys WHERE (scope, key) IN (
                    SELECT scope, key FROM idempotency_keys
                    WHERE created_at < now() - make_interval(hours => \(policy.idempotencyHours)::int) LIMIT \(batch))
                """
            ),
            ("rate_limits", RateLimiter.purgeStatement(batchSize: batch)),
            (
                "sessions",
                """
                DELETE FROM sessions WHERE id IN (
                    SELECT id FROM sessions
                    WHERE revoked_at IS NOT NULL AND revoked_at < now() - make_interval(hours => \(policy.revokedSessionHours)::int) LIMIT \(batch))
                """
            ),
            (
                "report_evidence",
                """
                UPDATE reports SET reported_title = NULL, reported_body = '', reported_media = '{}' WHERE id IN (
                    SELECT id FROM reports
                    WHERE status <> 'open' AND reported_body <> ''
                      AND resolved_at < now() - make_interval(days => \(policy.evidenceDays)::int) LIMIT \(batch))
                """
            ),
        ]
    }
}
