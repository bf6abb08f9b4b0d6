import Foundation

/// Where reports, decisions, bans, the log and blocked terms live. `PostgresModerationStore` is the real one.
public protocol ModerationStore: Sendable {
    /// Files `caller`'s report (or returns its existing one, `created: false`) and hides the post when trusted
    /// reporters reach the policy's threshold, all in one transaction that checks the caller first (`Caller`); `check`
    /// gets the post as locked and the caller, and answers the admission for a new report (it throws to refuse).
    /// `hid`: this report hid the post.
    func report(
        postID: Int, by caller: Caller, reason: ReportReason, note: String?, policy: ReportPolicy,
        check: @escaping @Sendable (ReportedContent, Identity) throws -> Admission
    ) async throws -> (report: Report, created: Bool, hid: Bool)
    func reports(byReporter: Int, before: Int?, limit: Int) async throws -> [Report]
    /// A page of the queue; its posts' `helpedByMe` is `viewer`'s.
    func queue(after: Int?, limit: Int, viewer: Int?) async throws -> [QueueItem]
    /// Applies a decision and resolves every open report on the post. Returns the post and the count resolved.
    /// `caller` is checked first, in the same transaction (`Caller`), and must be staff (`Identity.requireModerator`).
    func decide(postID: Int, action: ModerationAction, by caller: Caller, note: String?) async throws -> (Post, resolved: Int)
    /// A report on a reply (CONTRACT §13), as `report(postID:…)` for posts.
    func reportReply(
        replyID: Int, by caller: Caller, reason: ReportReason, note: String?, policy: ReportPolicy,
        check: @escaping @Sendable (ReportedContent, Identity) throws -> Admission
    ) async throws -> (report: Report, created: Bool, hid: Bool)
    /// A decision on a reply, as `decide(postID:…)` for posts.
    func decide(replyID: Int, action: ModerationAction, by caller: Caller, note: String?) async throws -> (Reply, resolved: Int)
    /// Bans account `accountID`, in a transaction that checks `caller` first (`Caller`); `mayBan` decides from the
    /// caller and the target's role, read on its locked row. Logged.
    func ban(
        accountID: Int, until: Date?, reason: String, by caller: Caller, mayBan: @escaping @Sendable (Identity, Role) throws -> Void
    ) async throws -> Account
    /// Lifts a ban, as `ban`.
    func unban(accountID: Int, by caller: Caller, mayBan: @escaping @Sendable (Identity, Role) throws -> Void) async throws
    func log(before: Int?, limit: Int) async throws -> [ModerationLogEntry]
    func setRole(username: String, role: Role) async throws -> Account?
    func addTerm(_ term: String) async throws
    func removeTerm(_ term: String) async throws -> Bool
    func terms() async throws -> [String]
}
