import Database
import Foundation
import RateLimit

/// What expires, purged in the background (CONTRACT §7): idempotency keys after 24 h, rate-limit buckets
/// whose window passed, revoked sessions, the snapshots of resolved reports `evidenceDays` after
/// resolution, media never attached after 24 h, retired media no report names any more, answered push notifications after
/// 24 h and the hourly reply windows that ended. One instance at
/// a time. It also moves what turns with time alone: timed bans that ran out are cleared (so the account's helpful
/// marks count again, sql/0021), and marks of anonymous accounts older than the trust age become trusted. A pass decides what goes only while it holds a PostgreSQL advisory lock, so several servers sharing
/// a database take turns instead of doing the work twice. The files of the media rows a pass deleted are
/// deleted after the lock is released, by that pass alone (no other pass was handed those rows).
///
/// Every batch repeats its condition in the outer statement: a row that changed while the batch waited on its
/// lock (a bucket that just took a hit, media that was just attached) is re-checked and kept.
public struct Purger: Sendable {
    public struct Policy: Sendable {
        /// `REPORT_EVIDENCE_DAYS`: resolved reports keep their snapshot this long.
        public var evidenceDays: Int
        /// Idempotency keys live this long (a replay after it makes a new resource).
        public var idempotencyHours: Int = 24
        /// Revoked sessions stay this long (for an operator looking at a recent logout), then go.
        public var revokedSessionHours: Int = 24
        /// Media never attached to a post is deleted after this long.
        public var unattachedMediaHours: Int = 24
        /// Rows per statement, so no pass holds many row locks or one long statement.
        public var batchSize: Int = 5000
        /// Media rows per statement (each row's files are deleted after the pass).
        public var mediaBatchSize: Int = 500
        /// `REPORT_TRUST_AGE_SECONDS`: a mark made this long ago is of an account at least this old, so it is trusted.
        public var trustAgeSeconds: Int = ReportPolicy().trustAgeSeconds
        /// The advisory lock that makes a pass one instance's at a time (tests use a lock of their own).
        public var lockKey: Int64 = 0x7762_7075_7267_6572  // "wbpurger"
        /// Answered push notifications are kept this long (for an operator asking what was sent), then go.
        public var pushDoneHours: Int = 24
        /// `STREAM_BACKLOG_SECONDS`: live board events are kept this long for clients resuming (CONTRACT §11).
        public var streamBacklogSeconds: Int = 3600

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

    let database: PostgresPool
    public let policy: Policy
    /// Deletes the files of purged media rows; nil (the operator command without a media store) leaves media alone.
    let media: MediaService?

    public init(database: PostgresPool, policy: Policy, media: MediaService? = nil) {
        self.database = database
        self.policy = policy
        self.media = media
    }

    /// One pass over every kind, each in batches until nothing is left.
    public func runOnce() async throws -> Pass {
        let lockKey = policy.lockKey
        let (pass, mediaKeys) = try await database.withConnection { connection -> (Pass, [String]) in
            let locked = try connection.query("SELECT pg_try_advisory_lock(\(lockKey)) AS locked")
            guard try locked.first?.decode(Bool.self, "locked") == true else { return (Pass(ran: false, counts: [:]), []) }
            // Released even when the pass is cancelled (a skipped unlock would keep the lock on a pooled connection).
            defer { connection.restoreSession("SELECT pg_advisory_unlock(\(lockKey)) AS unlocked") }
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
            var keys: [String] = []
            if media != nil {
                for (kind, statement) in mediaStatements() {
                    var total = 0
                    while true {
                        let batch = try connection.query(statement).map { try $0.decode(String.self, "storage_key") }
                        keys += batch
                        total += batch.count
                        if batch.count < policy.mediaBatchSize { break }
                    }
                    counts[kind] = total
                }
            }
            return (Pass(ran: true, counts: counts), keys)
        }
        await media?.deleteFiles(mediaKeys)
        return pass
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
                  AND created_at < now() - make_interval(hours => \(policy.idempotencyHours)::int)
                """
            ),
            ("rate_limits", RateLimiter.purgeStatement(batchSize: batch)),
            ("stream_events", PostgresStreamStore.trim(olderThanSeconds: policy.streamBacklogSeconds, limit: batch)),
            (
                "sessions",
                """
                DELETE FROM sessions WHERE id IN (
                    SELECT id FROM sessions
                    WHERE revoked_at IS NOT NULL AND revoked_at < now() - make_interval(hours => \(policy.revokedSessionHours)::int) LIMIT \(batch))
                  AND revoked_at < now() - make_interval(hours => \(policy.revokedSessionHours)::int)
                """
            ),
            (
                "expired_bans",
                """
                UPDATE accounts SET banned = false, banned_until = NULL WHERE id IN (
                    SELECT id FROM accounts WHERE banned AND banned_until <= now() LIMIT \(batch))
                  AND banned AND banned_until <= now()
                """
            ),
            (
                "trusted_marks",
                """
                WITH batch AS (
                    SELECT post_id, account_id FROM helpful_marks
                    WHERE NOT trusted AND created_at <= now() - make_interval(secs => \(Double(policy.trustAgeSeconds))) LIMIT \(batch)
                ), locked AS (
                    SELECT id FROM posts WHERE id IN (SELECT post_id FROM batch) ORDER BY id FOR NO KEY UPDATE
                )
                UPDATE helpful_marks m SET trusted = true, counted = NOT a.banned FROM accounts a
                WHERE (m.post_id, m.account_id) IN (SELECT post_id, account_id FROM batch)
                  AND NOT m.trusted AND a.id = m.account_id
                  -- The batch's posts are locked in id order before any mark changes (an init plan runs first), as
                  -- sql/0021's account trigger locks them: the two wait for each other instead of deadlocking.
                  AND (SELECT count(*) FROM locked) >= 0
                """
            ),
            (
                "push_queue",
                """
                DELETE FROM push_queue WHERE id IN (
                    SELECT id FROM push_queue WHERE done_at < now() - make_interval(hours => \(policy.pushDoneHours)::int) LIMIT \(batch))
                  AND done_at < now() - make_interval(hours => \(policy.pushDoneHours)::int)
                """
            ),
            (
                "push_reply_windows",
                """
                DELETE FROM push_reply_windows WHERE account_id IN (
                    SELECT account_id FROM push_reply_windows WHERE window_start < now() - interval '2 hours' LIMIT \(batch))
                  AND window_start < now() - interval '2 hours'
                """
            ),
            (
                "report_evidence",
                """
                UPDATE reports SET reported_title = NULL, reported_body = '', reported_media = '{}' WHERE id IN (
                    SELECT id FROM reports
                    WHERE status <> 'open' AND reported_body <> ''
                      AND resolved_at < now() - make_interval(days => \(policy.evidenceDays)::int) LIMIT \(batch))
                  AND status <> 'open' AND resolved_at < now() - make_interval(days => \(policy.evidenceDays)::int)
                """
            ),
        ]
    }

    /// The media kinds: each deletes at most `mediaBatchSize` rows and returns their storage keys.
    func mediaStatements() -> [(String, SQLQuery)] {
        [
            ("media_unattached", MediaRecords.purgeUnattached(olderThanHours: policy.unattachedMediaHours, limit: policy.mediaBatchSize)),
            ("media_retired", MediaRecords.purgeRetired(limit: policy.mediaBatchSize)),
        ]
    }
}
