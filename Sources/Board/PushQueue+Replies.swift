import Database
import Foundation
import Vocabulary

extension PushQueue {
    /// Queues the notification of reply `replyID`, which just became visible (created, or let through by a moderator),
    /// in that transaction on `connection`: one a device of its post's author, when the reply would show in the
    /// author's inbox (`PostgresReplyStore.inboxConditions`, the one visibility rule: visible, not the author's own,
    /// not by an account the author blocks, on a post that acts as visible to the author), the author is not banned and
    /// has replies on. A device in its quiet hours, and every device once the account had `repliesPerHour` reply
    /// notifications this hour, gets the reply folded into its one summary instead, sent when the quiet hours or the
    /// hour end. The hour is counted in one statement (`push_reply_windows`), so a burst of replies never sends more.
    func replyBecameVisible(_ replyID: Int, on connection: PostgresConnection) throws {
        guard enabled else { return }
        var sql: SQLQuery = """
            SELECT d.token, d.time_zone, d.language, s.quiet_start, s.quiet_end,
                   r.post_id, r.post_author_id, ra.display_name, r.body
            FROM replies r
            JOIN posts p ON p.id = r.post_id
            JOIN accounts ra ON ra.id = r.author_id
            JOIN accounts me ON me.id = r.post_author_id
            JOIN devices d ON d.account_id = r.post_author_id
            LEFT JOIN notification_settings s ON s.account_id = r.post_author_id
            WHERE r.id = \(replyID) AND coalesce(s.replies, true) AND NOT \(raw: Self.banned("me")) AND\u{20}
            """
        sql.append(PostgresReplyStore.inboxConditions("r.post_author_id"))
        let rows = try connection.query(sql)
        guard let first = rows.first else { return }
        let now = policy.clock()
        let postID = try first.decode(Int.self, "post_id")
        let recipient = try first.decode(Int.self, "post_author_id")
        let name = try first.decode(String.self, "display_name")
        let body = try first.decode(String.self, "body")

        var immediate: [(token: String, language: Language)] = []
        var folded: [(token: String, until: Date)] = []
        for row in rows {
            let token = try row.decode(String.self, "token")
            let language = Language(rawValue: try row.decode(String.self, "language")) ?? .en
            if let quiet = try Self.quietHours(row), let zone = TimeZone(identifier: try row.decode(String.self, "time_zone")) {
                let (isQuiet, endsAt) = quiet.quiet(at: Int64(now.timeIntervalSince1970), in: zone)
                if isQuiet {
                    folded.append((token, endsAt.map { Date(timeIntervalSince1970: TimeInterval($0)) } ?? now))
                    continue
                }
            }
            immediate.append((token, language))
        }
        if !immediate.isEmpty, let windowEnd = try overCap(recipient, now: now, on: connection) {
            folded += immediate.map { ($0.token, windowEnd) }
            immediate = []
        }
        let expires = now.addingTimeInterval(TimeInterval(policy.expirySeconds))
        try Self.insert(
            immediate.map { device in
                let payload = PushPayload(.reply(postID: postID, replyID: replyID, replierName: name, body: body), language: device.language)
                return Item(
                    accountID: recipient, deviceToken: device.token, kind: .reply, collapseID: "reply-\(replyID)",
                    payload: String(decoding: payload.json(), as: UTF8.self), replyID: replyID, sendAfter: now, expiresAt: expires
                )
            },
            on: connection
        )
        try fold(postID: postID, for: recipient, into: folded, on: connection)
    }

    /// The account's quiet hours from a row with `quiet_start` and `quiet_end` (minutes), nil without.
    static func quietHours(_ row: PostgresRow) throws -> NotificationSettings.QuietHours? {
        guard let start = try row.decode(Int?.self, "quiet_start").flatMap(LocalTime.init(minutes:)),
            let end = try row.decode(Int?.self, "quiet_end").flatMap(LocalTime.init(minutes:))
        else { return nil }
        return .init(start: start, end: end)
    }

    /// Counts one reply notification in `accountID`'s hourly window (a new window when the last one ended), in one
    /// statement; nil while under the cap, else when the window ends.
    func overCap(_ accountID: Int, now: Date, on connection: PostgresConnection) throws -> Date? {
        let row = try connection.query(
            """
            INSERT INTO push_reply_windows AS w (account_id, window_start, sent) VALUES (\(accountID), \(now), 1)
            ON CONFLICT (account_id) DO UPDATE SET
                window_start = CASE WHEN w.window_start <= EXCLUDED.window_start - interval '1 hour' THEN EXCLUDED.window_start ELSE w.window_start END,
                sent = CASE WHEN w.window_start <= EXCLUDED.window_start - interval '1 hour' THEN 1 ELSE w.sent + 1 END
            RETURNING sent, window_start
            """
        )[0]
        guard try row.decode(Int.self, "sent") > policy.repliesPerHour else { return nil }
        return try row.decode(Date.self, "window_start").addingTimeInterval(3600)
    }

    /// Adds a reply on post `postID` to each device's open summary (made when it has none), due when the later of its
    /// reasons ends. The summary's text is rendered when it goes, with its count then.
    func fold(postID: Int, for accountID: Int, into devices: [(token: String, until: Date)], on connection: PostgresConnection) throws {
        guard !devices.isEmpty else { return }
        try connection.execute(
            """
            INSERT INTO push_queue AS q (account_id, device_token, kind, apns_id, collapse_id, priority, folded, post_ids, send_after, expires_at)
            SELECT \(accountID), t.token, 'replies', gen_random_uuid(), 'replies', 10, 1, ARRAY[\(postID)]::bigint[],
                   to_timestamp(t.until::double precision), to_timestamp(t.until::double precision) + make_interval(secs => \(policy.expirySeconds))
            FROM unnest(\(devices.map(\.token))::text[], \(devices.map { String($0.until.timeIntervalSince1970) })::text[]) AS t(token, until)
            ON CONFLICT (device_token) WHERE kind = 'replies' AND attempts = 0 AND done_at IS NULL DO UPDATE SET
                folded = q.folded + 1,
                post_ids = CASE WHEN \(postID)::bigint = ANY (q.post_ids) THEN q.post_ids ELSE q.post_ids || \(postID)::bigint END,
                send_after = greatest(q.send_after, EXCLUDED.send_after),
                expires_at = greatest(q.expires_at, EXCLUDED.expires_at)
            """
        )
    }
}
