import Database
import Foundation
import Vocabulary

extension PushQueue {
    /// Queues the notification of `reply`, which just became visible (created, or let through by a moderator), in that
    /// transaction on `connection`: nothing unless it belongs in its post's author's inbox (`Visibility.inboxHolds`, the
    /// one rule), then one statement: a row a device of the author, unless the author blocks the replier, is banned, has
    /// replies off, or was told of it already. The same statement counts it in the author's hourly window
    /// (`push_reply_windows`: replies at once to one account count one after another, on the window's row): past
    /// `repliesPerHour` it is marked to fold (`fold_until`, when the window ends). What it says and the quiet hours are
    /// the worker's (`admitReplies`), in batches: the reply's own transaction grows by one statement, planned as one
    /// probe of each table it reads.
    func replyBecameVisible(_ reply: Reply, on connection: PostgresConnection) throws {
        guard enabled,
            Visibility.inboxHolds(reply.state, authorID: reply.authorID, post: reply.postState, postAuthorID: reply.postAuthorID)
        else { return }
        let now = policy.clock()
        let (me, replier, replyID) = (reply.postAuthorID, reply.authorID, reply.id)
        try connection.execute(
            """
            WITH target AS (
                SELECT d.account_id, d.token FROM devices d
                WHERE d.account_id = \(me)
                  AND NOT EXISTS (SELECT 1 FROM notification_settings s WHERE s.account_id = \(me) AND NOT s.replies)
                  AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = \(me) AND \(raw: Self.banned("a")))
                  AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = \(me) AND b.blocked_id = \(replier))
                  AND NOT EXISTS (SELECT 1 FROM push_queue q WHERE q.device_token = d.token AND q.reply_id = \(replyID) AND q.kind = 'reply')
            ), counted AS (
                INSERT INTO push_reply_windows AS w (account_id, window_start, sent)
                SELECT DISTINCT account_id, \(now)::timestamptz, 1 FROM target
                ON CONFLICT (account_id) DO UPDATE SET
                    window_start = CASE WHEN w.window_start <= EXCLUDED.window_start - interval '1 hour' THEN EXCLUDED.window_start ELSE w.window_start END,
                    sent = CASE WHEN w.window_start <= EXCLUDED.window_start - interval '1 hour' THEN 1 ELSE w.sent + 1 END
                RETURNING sent, window_start
            )
            INSERT INTO push_queue (account_id, device_token, kind, apns_id, collapse_id, priority, reply_id, send_after, expires_at, fold_until)
            SELECT t.account_id, t.token, 'reply', gen_random_uuid(), \("reply-\(replyID)"), 10, \(replyID), \(now),
                   \(now.addingTimeInterval(TimeInterval(policy.expirySeconds))),
                   CASE WHEN c.sent > \(policy.repliesPerHour) THEN c.window_start + interval '1 hour' END
            FROM target t CROSS JOIN counted c
            ON CONFLICT DO NOTHING
            """
        )
    }

    /// The quiet hours from a row with `quiet_start` and `quiet_end` (minutes), nil without.
    static func quietHours(_ row: PostgresRow) throws -> NotificationSettings.QuietHours? {
        guard let start = try row.decode(Int?.self, "quiet_start").flatMap(LocalTime.init(minutes:)),
            let end = try row.decode(Int?.self, "quiet_end").flatMap(LocalTime.init(minutes:))
        else { return nil }
        return .init(start: start, end: end)
    }

    /// Decides, for a worker's batch, which reply notifications go now: one on a device in its quiet hours, and one
    /// past the hourly cap (`fold_until`, decided when it was queued), is folded into the device's one summary instead
    /// (sent when the quiet hours or the hour end) and done. The rest are rendered (the replier's name and the body's
    /// excerpt, in the device's language); a retry renders the same bytes again (nothing of them is stored: one row write
    /// less a notification).
    func admitReplies(_ claimed: inout [Claimed], on database: PostgresPool) async throws {
        let fresh = claimed.indices.filter { claimed[$0].reply != nil && claimed[$0].dropped == nil && claimed[$0].push.payload.isEmpty }
        guard !fresh.isEmpty else { return }
        let now = policy.clock()
        var folds: [(index: Int, until: Date)] = []
        for i in fresh {
            var until = claimed[i].foldUntil
            if let quiet = claimed[i].quietHours, let zone = TimeZone(identifier: claimed[i].timeZone) {
                let (isQuiet, endsAt) = quiet.quiet(at: Int64(now.timeIntervalSince1970), in: zone)
                if isQuiet {
                    let end = endsAt.map { Date(timeIntervalSince1970: TimeInterval($0)) } ?? now
                    until = max(until ?? end, end)
                }
            }
            if let until {
                folds.append((i, until))
                continue
            }
            let reply = claimed[i].reply!
            let payload = PushPayload(
                .reply(postID: reply.postID, replyID: reply.replyID, replierName: reply.replierName, body: reply.body), language: claimed[i].language
            ).json()
            claimed[i].push = claimed[i].push.with(payload: payload)
        }
        let folded = folds.map { (claimed[$0.index], $0.until) }
        guard !folded.isEmpty else { return }
        try await database.transaction { connection in
            for (item, until) in folded {
                try self.fold(postID: item.reply!.postID, for: item.accountID, into: [(item.push.deviceToken, until)], on: connection)
            }
            try connection.execute(
                """
                UPDATE push_queue SET done_at = \(now), result = 'folded', leased_until = NULL
                WHERE id = ANY (\(folded.map { String($0.0.id) })::text[]::bigint[])
                """
            )
        }
        for (index, _) in folds { claimed[index].dropped = "folded" }
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
            ON CONFLICT (device_token) WHERE kind = 'replies' AND NOT sealed AND done_at IS NULL DO UPDATE SET
                folded = q.folded + 1,
                post_ids = CASE WHEN \(postID)::bigint = ANY (q.post_ids) THEN q.post_ids ELSE q.post_ids || \(postID)::bigint END,
                send_after = greatest(q.send_after, EXCLUDED.send_after),
                expires_at = greatest(q.expires_at, EXCLUDED.expires_at)
            """
        )
    }
}
