import Database
import Foundation
import Vocabulary

extension PushQueue {
    /// What a moderator's decision changed, for its notifications.
    struct Decision: Sendable {
        var postID: Int
        var replyID: Int?
        var action: ModerationAction
        /// The target's status changed: a removal or a restore that did something tells the author.
        var changed: Bool
        /// The reports it resolved.
        var reportIDs: [Int]
    }

    /// Queues a decision's notifications in its transaction on `connection`: `reportOutcome` to each account whose
    /// report it resolved (the outcome and the reported title, never who decided), and `moderation` to the author of
    /// the post or reply it removed or restored. Settings off, or a banned recipient (except for `moderation`): none.
    func decided(_ decision: Decision, on connection: PostgresConnection) throws {
        guard enabled else { return }
        let now = policy.clock()
        let expires = now.addingTimeInterval(TimeInterval(policy.expirySeconds))
        var items: [Item] = []
        if !decision.reportIDs.isEmpty {
            let rows = try connection.query(
                """
                SELECT rp.id, rp.reporter_id, coalesce(rp.reported_title, p.title) AS title, d.token, d.language
                FROM reports rp
                JOIN posts p ON p.id = rp.post_id
                JOIN accounts a ON a.id = rp.reporter_id
                JOIN devices d ON d.account_id = rp.reporter_id
                LEFT JOIN notification_settings s ON s.account_id = rp.reporter_id
                WHERE rp.id = ANY (\(decision.reportIDs.map(String.init))::text[]::bigint[])
                  AND coalesce(s.report_outcomes, true) AND NOT \(raw: Self.banned("a"))
                """
            )
            let outcome = PushPayload.Outcome(decision.action)
            for row in rows {
                let reportID = try row.decode(Int.self, "id")
                let payload = PushPayload(
                    .reportOutcome(reportID: reportID, outcome: outcome, title: try row.decode(String?.self, "title"), onReply: decision.replyID != nil),
                    language: Language(rawValue: try row.decode(String.self, "language")) ?? .en
                )
                items.append(
                    .rendered(
                        payload, kind: .reportOutcome, collapseID: "report-\(reportID)", accountID: try row.decode(Int.self, "reporter_id"),
                        deviceToken: try row.decode(String.self, "token"), now: now, expiresAt: expires
                    )
                )
            }
        }
        let action: PushPayload.Action? = switch decision.action {
        case .remove: .remove
        case .restore: .restore
        case .dismiss: nil
        }
        if decision.changed, let action {
            let author: SQLQuery = decision.replyID.map { "(SELECT author_id FROM replies WHERE id = \($0))" } ?? "p.author_id"
            let rows = try connection.query(
                """
                SELECT p.title, d.account_id, d.token, d.language
                FROM posts p
                JOIN devices d ON d.account_id = \(author)
                LEFT JOIN notification_settings s ON s.account_id = d.account_id
                WHERE p.id = \(decision.postID) AND coalesce(s.moderation, true)
                """
            )
            let target = decision.replyID.map { "reply-\($0)" } ?? "post-\(decision.postID)"
            for row in rows {
                let payload = PushPayload(
                    .moderation(postID: decision.postID, replyID: decision.replyID, action: action, title: try row.decode(String?.self, "title")),
                    language: Language(rawValue: try row.decode(String.self, "language")) ?? .en
                )
                items.append(
                    .rendered(
                        payload, kind: .moderation, collapseID: "moderation-\(target)", accountID: try row.decode(Int.self, "account_id"),
                        deviceToken: try row.decode(String.self, "token"), now: now, expiresAt: expires
                    )
                )
            }
        }
        try Self.insert(items, on: connection)
    }
}
