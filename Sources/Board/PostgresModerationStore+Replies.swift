import Database
import Foundation

/// Reports on replies and decisions on them (CONTRACT §13), as for posts: the same report rows (with `reply_id`), the
/// same threshold, the same queue and log.
extension PostgresModerationStore {
    /// Files `reporterID`'s report on reply `replyID` with a snapshot of its body, once per account and reply. The reply's
    /// row is locked first, so concurrent reports on one reply are counted one after another; when the trusted distinct
    /// reporters of its open reports reach `policy.hideThreshold`, a visible reply is hidden at once.
    public func reportReply(
        replyID: Int, reporterID: Int, reason: ReportReason, note: String?, policy: ReportPolicy, admission: Admission
    ) async throws -> (Report, created: Bool) {
        try await database.fencedTransaction(reads) { connection, fence in
            let locked = try connection.query("SELECT status FROM replies WHERE id = \(replyID) AND deleted_at IS NULL FOR UPDATE")
            guard let status = try locked.first?.decode(String.self, "status") else { throw BoardError.notFound("reply") }
            let earlier = try connection.query(
                "SELECT \(raw: Self.reportColumns) FROM reports r WHERE r.reply_id = \(replyID) AND r.reporter_id = \(reporterID)"
            )
            if let row = earlier.first { return (try Self.report(from: row), false) }
            try admission.admit(on: connection)
            let inserted = try connection.query(
                """
                INSERT INTO reports (post_id, reply_id, reporter_id, reason, note, reported_title, reported_body)
                SELECT post_id, id, \(reporterID), \(reason.rawValue), \(note), NULL, body FROM replies WHERE id = \(replyID)
                RETURNING \(raw: Self.reportColumns.replacingOccurrences(of: "r.", with: ""))
                """
            )
            let report = try Self.report(from: inserted[0])
            if status == PostStatus.visible.rawValue {
                let trusted = try connection.query(
                    """
                    SELECT count(DISTINCT r.reporter_id) AS n
                    FROM reports r JOIN accounts a ON a.id = r.reporter_id
                    WHERE r.reply_id = \(replyID) AND r.status = 'open' AND a.deleted_at IS NULL
                      AND (a.kind = 'registered' OR a.created_at <= now() - make_interval(secs => \(Double(policy.trustAgeSeconds))))
                    """
                )[0].decode(Int.self, "n")
                if trusted >= policy.hideThreshold {
                    try connection.execute("UPDATE replies SET status = 'hidden', hidden_reason = 'reports' WHERE id = \(replyID) AND status = 'visible'")
                    fence.fence()
                }
            }
            return (report, true)
        }
    }

    /// A moderator's decision on a reply, as on a post (`decide(_:action:…)`), in one transaction.
    public func decide(replyID: Int, action: ModerationAction, moderatorID: Int, note: String?) async throws -> (Reply, resolved: Int) {
        try await database.fencedTransaction(reads) { connection in
            let resolved = try Self.decide(.reply(replyID), action: action, moderatorID: moderatorID, note: note, on: connection)
            return (try PostgresReplyStore.replies(connection.query(PostgresReplyStore.byID(replyID)))[0], resolved)
        }
    }
}
