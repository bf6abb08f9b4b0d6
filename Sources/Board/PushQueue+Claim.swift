import Database
import Foundation
import Push
import Vocabulary

extension PushQueue {
    /// A notification a worker claimed: what to send, or why it is not sent after all.
    public struct Claimed: Sendable {
        public var id: Int
        public var kind: Kind
        public var push: APNsPush
        /// When it was queued (for `push_delivery_seconds`).
        public var queuedAt: Date
        /// Tries so far, this one included.
        public var attempts: Int
        /// When the device was registered, in milliseconds since 1970: a 410 older than it does not remove the device.
        public var registeredAtMilliseconds: Int64
        /// Set when it must not go after all: the device moved to another account, the recipient was banned (all but
        /// `moderation`), the reply is no longer one its author would see, it expired, or it was folded into a summary.
        public var dropped: String?
        /// The account it is for, and its device's language and time zone.
        public var accountID: Int
        public var language: Language
        public var timeZone: String
        /// The account's quiet hours, if any.
        public var quietHours: NotificationSettings.QuietHours?
        /// A reply's notification not rendered yet (`PushQueue.admitReplies` renders it, or folds it).
        public var reply: ReplyContent?
        /// Past the hourly cap when it was queued: folded, due when the hour ends.
        public var foldUntil: Date?
    }

    /// What a reply's notification says.
    public struct ReplyContent: Sendable {
        public var postID: Int
        public var replyID: Int
        public var replierName: String
        public var body: String
    }

    /// How a claimed notification ended, or when it is tried again.
    public enum Settlement: Sendable {
        /// Done: `result` is kept in the row (`delivered`, `rejected`, `expired`, `dropped`).
        case done(result: String)
        /// Tried again at `after`.
        case retry(after: Date)
        /// APNs says the device is gone: it is removed with what is queued for it (a 410 only when later than its
        /// registration: `since` nil or later).
        case removeDevice(result: String, sinceMilliseconds: Int64?)
    }

    /// Claims up to `limit` due notifications for a worker: `FOR UPDATE SKIP LOCKED`, so workers on any number of
    /// instances never claim the same row, and leased for `leaseSeconds` (a worker that dies leaves them to another
    /// when the lease ends, with the same `apns_id`). Each is read with what decides whether it may still go: the
    /// device's account and registration, the recipient's ban, and for a reply the inbox's conditions again.
    public func claim(limit: Int, on database: PostgresPool) async throws -> [Claimed] {
        let now = policy.clock()
        let rows = try await database.query(Self.claimQuery(now: now, leaseEnd: now.addingTimeInterval(TimeInterval(policy.leaseSeconds)), limit: limit))
        return try rows.compactMap { row in
            guard let kind = Kind(rawValue: try row.decode(String.self, "kind")),
                let environment = APNsPush.Environment(rawValue: try row.decode(String.self, "environment")),
                let apnsID = UUID(uuidString: try row.decode(String.self, "apns_id"))
            else { return nil }
            let language = Language(rawValue: try row.decode(String.self, "language")) ?? .en
            let expiresAt = try row.decode(Date.self, "expires_at")
            var payload = try row.decode(String?.self, "payload").map { Array($0.utf8) }
            if kind == .replies {
                let postIDs = try row.decode(String.self, "post_ids").split(separator: ",").compactMap { Int($0) }
                payload = PushPayload(.replies(count: try row.decode(Int.self, "folded"), postIDs: postIDs), language: language).json()
            }
            var dropped: String?
            if !(try row.decode(Bool.self, "same_account")) {
                dropped = "device moved"
            } else if try row.decode(Bool.self, "banned"), kind != .moderation {
                dropped = "banned"
            } else if !(try row.decode(Bool.self, "reply_shown")) {
                dropped = "reply not shown"
            } else if expiresAt <= now {
                dropped = "expired"
            }
            let replyID = try row.decode(Int?.self, "reply_id")
            var reply: ReplyContent?
            if let replyID, let postID = try row.decode(Int?.self, "reply_post_id") {
                reply = ReplyContent(
                    postID: postID, replyID: replyID, replierName: try row.decode(String?.self, "replier_name") ?? "",
                    body: try row.decode(String?.self, "reply_body") ?? ""
                )
            }
            return Claimed(
                id: try row.decode(Int.self, "id"), kind: kind,
                push: APNsPush(
                    deviceToken: try row.decode(String.self, "device_token"), environment: environment, apnsID: apnsID,
                    collapseID: try row.decode(String.self, "collapse_id"), priority: kind.priority,
                    expiration: Int(expiresAt.timeIntervalSince1970), payload: payload ?? []
                ),
                queuedAt: try row.decode(Date.self, "created_at"), attempts: try row.decode(Int.self, "attempts"),
                registeredAtMilliseconds: try row.decode(Int64.self, "registered_ms"), dropped: dropped,
                accountID: try row.decode(Int.self, "account_id"), language: language, timeZone: try row.decode(String.self, "time_zone"),
                quietHours: try Self.quietHours(row), reply: reply, foldUntil: try row.decode(Date?.self, "fold_until")
            )
        }
    }

    /// `claim`'s statement: up to `limit` due rows, leased until `leaseEnd`, read with what decides whether each may
    /// still go (`PushPlanTests` plans it at 1M rows).
    static func claimQuery(now: Date, leaseEnd: Date, limit: Int) -> SQLQuery {
        var sql: SQLQuery = """
            WITH due AS (
                SELECT id FROM push_queue
                WHERE done_at IS NULL AND send_after <= \(now) AND (leased_until IS NULL OR leased_until <= \(now))
                ORDER BY send_after, id LIMIT \(limit) FOR UPDATE SKIP LOCKED
            ), claimed AS (
                UPDATE push_queue q SET leased_until = \(leaseEnd), attempts = q.attempts + 1, sealed = q.sealed OR q.kind = 'replies' FROM due WHERE q.id = due.id
                RETURNING q.*
            )
            SELECT c.id, c.kind, c.apns_id::text AS apns_id, c.collapse_id, c.payload, c.folded, array_to_string(c.post_ids, ',') AS post_ids,
                   c.expires_at, c.attempts, c.created_at, c.device_token, c.account_id, c.reply_id, c.fold_until, d.environment, d.language, d.time_zone,
                   s.quiet_start, s.quiet_end, rc.post_id AS reply_post_id, rc.body AS reply_body, rc.display_name AS replier_name,
                   (extract(epoch FROM d.registered_at) * 1000)::bigint AS registered_ms,
                   (d.account_id = c.account_id) AS same_account, a.banned_now AS banned,
                   (c.reply_id IS NULL OR EXISTS (
                       SELECT 1 FROM replies r JOIN posts p ON p.id = r.post_id WHERE r.id = c.reply_id AND r.post_author_id = c.account_id AND\u{20}
            """
        sql.append(PostgresReplyStore.inboxConditions("c.account_id"))
        // Each claimed row probes its device, account, settings and reply by key (LATERAL behind a fence): a batch of
        // 500 never becomes a hash join over every device (`PushPlanTests`).
        sql.append(
            """
                   )) AS reply_shown
            FROM claimed c
            CROSS JOIN LATERAL (\(raw: PlanTrick.fenced("SELECT environment, language, time_zone, registered_at, account_id FROM devices WHERE token = c.device_token"))) d
            CROSS JOIN LATERAL (\(raw: PlanTrick.fenced("SELECT \(Self.banned("accounts")) AS banned_now FROM accounts WHERE id = c.account_id"))) a
            LEFT JOIN LATERAL (\(raw: PlanTrick.fenced("SELECT quiet_start, quiet_end FROM notification_settings WHERE account_id = c.account_id"))) s ON true
            LEFT JOIN LATERAL (\(raw: PlanTrick.fenced("""
                SELECT r.post_id, r.body, ra.display_name FROM replies r JOIN accounts ra ON ra.id = r.author_id
                WHERE r.id = c.reply_id AND c.kind = 'reply'
                """))) rc ON true
            """
        )
        return sql
    }

    /// Records how claimed notifications ended, in one transaction. (Folded ones were recorded by `admitReplies`.)
    public func settle(_ settlements: [(id: Int, token: String, settlement: Settlement)], on database: PostgresPool) async throws {
        guard !settlements.isEmpty else { return }
        let now = policy.clock()
        var done: [(Int, String)] = []
        var retries: [(Int, Date)] = []
        var removals: [(Int, String, String, Int64?)] = []
        for (id, token, settlement) in settlements {
            switch settlement {
            case .done(let result): done.append((id, result))
            case .retry(let after): retries.append((id, after))
            case .removeDevice(let result, let since): removals.append((id, token, result, since))
            }
        }
        let (finished, retried, removed) = (done + removals.map { ($0.0, $0.2) }, retries, removals)
        try await database.transaction { connection in
            // A removal's row is done first, so what it says survives when the device's removal takes the rest.
            if !finished.isEmpty {
                try connection.execute(
                    """
                    UPDATE push_queue q SET done_at = \(now), result = t.result, leased_until = NULL
                    FROM unnest(\(finished.map { String($0.0) })::text[], \(finished.map(\.1))::text[]) AS t(id, result)
                    WHERE q.id = t.id::bigint
                    """
                )
            }
            if !retried.isEmpty {
                try connection.execute(
                    """
                    UPDATE push_queue q SET send_after = to_timestamp(t.after::double precision), leased_until = NULL
                    FROM unnest(\(retried.map { String($0.0) })::text[], \(retried.map { String($0.1.timeIntervalSince1970) })::text[]) AS t(id, after)
                    WHERE q.id = t.id::bigint
                    """
                )
            }
            for (_, token, _, since) in removed {
                if let since {
                    try connection.execute(
                        "DELETE FROM devices WHERE token = \(token) AND registered_at < to_timestamp(\(Double(since) / 1000))"
                    )
                } else {
                    try connection.execute("DELETE FROM devices WHERE token = \(token)")
                }
            }
        }
    }

    /// Notifications not yet answered, due or waiting (`push_queue_depth`).
    public func depth(on database: PostgresPool) async throws -> Int {
        try await database.query("SELECT count(*) AS n FROM push_queue WHERE done_at IS NULL")[0].decode(Int.self, "n")
    }
}

extension PushQueue {
    /// A registered device, as `weatherboard push test` sends to it.
    public struct TestDevice: Sendable {
        public var token: String
        public var environment: APNsPush.Environment
        public var language: Language
    }

    /// The devices of the account named `username`; nil when there is no such account.
    public static func devices(ofUsername username: String, on database: PostgresPool) async throws -> [TestDevice]? {
        let rows = try await database.query(
            """
            SELECT a.id, d.token, d.environment, d.language FROM accounts a LEFT JOIN devices d ON d.account_id = a.id
            WHERE a.username = \(username) AND a.deleted_at IS NULL ORDER BY d.id DESC
            """
        )
        guard !rows.isEmpty else { return nil }
        return try rows.compactMap { row in
            guard let token = try row.decode(String?.self, "token"),
                let environment = APNsPush.Environment(rawValue: try row.decode(String.self, "environment"))
            else { return nil }
            return TestDevice(token: token, environment: environment, language: Language(rawValue: try row.decode(String.self, "language")) ?? .en)
        }
    }
}

extension APNsPush {
    /// The same push with `payload` (a reply's, rendered by the worker).
    func with(payload: [UInt8]) -> APNsPush {
        APNsPush(
            deviceToken: deviceToken, environment: environment, apnsID: apnsID, collapseID: collapseID, priority: priority,
            expiration: expiration, payload: payload
        )
    }
}
