import Database
import Foundation

/// Reports on replies and decisions on them (CONTRACT §13), as for posts: the same report rows (with `reply_id`), the
/// same threshold, the same queue and log.
extension PostgresModerationStore {
    /// Files `reporterID`'s report on reply `replyID`, as on a post (`file`).
    public func reportReply(
        replyID: Int, reporterID: Int, reason: ReportReason, note: String?, policy: ReportPolicy, admission: Admission
    ) async throws -> (Report, created: Bool) {
        try await database.fencedTransaction(reads) { connection, fence in
            try Self.file(.reply(replyID), reporterID: reporterID, reason: reason, note: note, policy: policy, admission: admission, fence: fence, on: connection)
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
