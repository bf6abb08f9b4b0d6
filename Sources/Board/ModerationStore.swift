import Foundation

/// Where reports, decisions, bans, the log and blocked terms live. `PostgresModerationStore` is the real one.
public protocol ModerationStore: Sendable {
    /// Files a report (or returns the reporter's existing one, `created: false`) and hides the post when
    /// trusted reporters reach the policy's threshold, all in one transaction.
    func report(postID: Int, reporterID: Int, reason: ReportReason, note: String?, policy: ReportPolicy, admission: Admission) async throws -> (Report, created: Bool)
    func reports(byReporter: Int, before: Int?, limit: Int) async throws -> [Report]
    /// A page of the queue; its posts' `helpedByMe` is `viewer`'s.
    func queue(after: Int?, limit: Int, viewer: Int?) async throws -> [QueueItem]
    /// Applies a decision and resolves every open report on the post. Returns the post and the count resolved.
    func decide(postID: Int, action: ModerationAction, moderatorID: Int, note: String?) async throws -> (Post, resolved: Int)
    /// A report on a reply (CONTRACT §13), as `report(postID:…)` for posts.
    func reportReply(replyID: Int, reporterID: Int, reason: ReportReason, note: String?, policy: ReportPolicy, admission: Admission) async throws -> (Report, created: Bool)
    /// A decision on a reply, as `decide(postID:…)` for posts.
    func decide(replyID: Int, action: ModerationAction, moderatorID: Int, note: String?) async throws -> (Reply, resolved: Int)
    func ban(accountID: Int, until: Date?, reason: String, moderatorID: Int?) async throws -> Account
    func unban(accountID: Int, moderatorID: Int?) async throws
    func log(before: Int?, limit: Int) async throws -> [ModerationLogEntry]
    func setRole(username: String, role: Role) async throws -> Account?
    func addTerm(_ term: String) async throws
    func removeTerm(_ term: String) async throws -> Bool
    func terms() async throws -> [String]
}
