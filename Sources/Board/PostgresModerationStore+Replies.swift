import Database
import Foundation

/// Reports on replies and decisions on them (CONTRACT §13), as for posts: the same report rows (with `reply_id`), the
/// same threshold, the same queue and log.
extension PostgresModerationStore {
    /// Files `caller`'s report on reply `replyID`, as on a post (`file`).
    public func reportReply(
        replyID: Int, by caller: Caller, reason: ReportReason, note: String?, policy: ReportPolicy,
        check: @escaping @Sendable (ReportedContent, Identity) throws -> Admission
    ) async throws -> (report: Report, created: Bool, hid: Bool) {
        try await database.fencedTransaction(reads) { connection, fence in
            try Self.file(.reply(replyID), by: caller, reason: reason, note: note, policy: policy, check: check, fence: fence, on: connection)
        }
    }

    /// A moderator's decision on a reply, as on a post (`decide(_:action:…)`), in one transaction.
    public func decide(replyID: Int, action: ModerationAction, by caller: Caller, note: String?) async throws -> (Reply, resolved: Int) {
        try await database.fencedTransaction(reads) { connection in
            let moderatorID = try Self.moderator(caller, on: connection)
            let resolved = try Self.decide(.reply(replyID), action: action, moderatorID: moderatorID, note: note, push: push, on: connection)
            return (try PostgresReplyStore.replies(connection.query(PostgresReplyStore.byID(replyID)))[0], resolved)
        }
    }
}
