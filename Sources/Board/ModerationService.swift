import Foundation
import RateLimit
import Vocabulary

/// CONTRACT §5: reports, the moderator's queue and decisions, bans, the log, roles and blocked terms.
public struct ModerationService: Sendable {
    let store: any ModerationStore
    let posts: PostService
    let rateLimiter: RateLimiter
    public let policy: ReportPolicy

    public init(store: any ModerationStore, posts: PostService, rateLimiter: RateLimiter, policy: ReportPolicy) {
        self.store = store
        self.posts = posts
        self.rateLimiter = rateLimiter
        self.policy = policy
    }

    // MARK: Reports

    /// Reports a post (CONTRACT §5): only one the reporter can see (404 otherwise, like reading it), never one's own
    /// (403), not while banned, once per account (a repeat answers the first report, 200, without spending the
    /// allowance). Decided on the post's locked row, in a transaction that checks the caller first (`Caller`).
    public func report(postID: Int, reason rawReason: String, note rawNote: String?, by caller: Caller) async throws -> (Report, created: Bool) {
        let (reason, note) = try Self.reportInput(rawReason, rawNote)
        let filed = try await store.report(postID: postID, by: caller, reason: reason, note: note, policy: policy, check: reportCheck(own: "post"))
        // A report that hid the post: its images leave the public side at once.
        if filed.hid { await posts.media?.syncVisibility(.post(postID)) }
        return (filed.report, filed.created)
    }

    /// A report's reason and note, checked.
    static func reportInput(_ rawReason: String, _ rawNote: String?) throws -> (ReportReason, String?) {
        guard let reason = ReportReason(rawValue: rawReason), reason != .filter else {
            throw BoardError.invalidField(field: "reason", message: "must be one of spam, abuse, hate, sexual, misinformation, other")
        }
        return (reason, try rawNote.map { try TextRules.validate($0, field: "note", range: 0...500) }.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Who may report what, decided in the report's transaction: a reporter that is not banned, on content it can see
    /// (404) and that is not its own (403); answers the reporting allowance a new report is charged to.
    func reportCheck(own what: String) -> @Sendable (ReportedContent, Identity) throws -> Admission {
        let limiter = rateLimiter
        return { content, identity in
            try identity.requireNotBanned()
            guard !content.isDeleted, content.isShown(to: Viewer(identity, reads: .primary)) else { throw BoardError.notFound(what) }
            guard content.authorID != identity.accountID else { throw BoardError.forbidden("you cannot report your own \(what)") }
            return Admission(limiter, .reporting, subject: "\(identity.accountID)")
        }
    }

    /// Reports a reply (CONTRACT §13), as a post: only one the reporter can see (404), never one's own (403), once per
    /// account (a repeat answers the first report, 200), a new one counted against the reporting allowance.
    public func reportReply(replyID: Int, reason rawReason: String, note rawNote: String?, by caller: Caller) async throws -> (Report, created: Bool) {
        let (reason, note) = try Self.reportInput(rawReason, rawNote)
        let filed = try await store.reportReply(replyID: replyID, by: caller, reason: reason, note: note, policy: policy, check: reportCheck(own: "reply"))
        return (filed.report, filed.created)
    }

    /// A moderator's decision on a reply (`POST /v1/moderation/replies/{id}/decision`).
    /// Staff only, checked in the decision's transaction (`Caller`).
    public func decide(replyID: Int, action rawAction: String, note rawNote: String?, by caller: Caller) async throws -> (Reply, resolved: Int) {
        let action = try Self.action(rawAction)
        return try await store.decide(replyID: replyID, action: action, by: caller, note: try Self.note(rawNote))
    }

    static func action(_ raw: String) throws -> ModerationAction {
        guard let action = ModerationAction(rawValue: raw) else {
            throw BoardError.invalidField(field: "action", message: "must be dismiss, remove or restore")
        }
        return action
    }

    public func myReports(_ identity: Identity, before: Int?, limit: Int) async throws -> (reports: [Report], nextCursor: String?) {
        let rows = try await store.reports(byReporter: identity.accountID, before: before, limit: limit + 1)
        guard rows.count > limit else { return (rows, nil) }
        let shown = Array(rows.prefix(limit))
        return (shown, shown.last.map { Cursor.encode($0.id) })
    }

    // MARK: Moderators

    public func queue(_ identity: Identity, after: Int?, limit: Int) async throws -> (items: [QueueItem], nextCursor: String?) {
        try identity.requireModerator()
        let items = try await store.queue(after: after, limit: limit + 1, viewer: identity.accountID)
        guard items.count > limit else { return (items, nil) }
        let shown = Array(items.prefix(limit))
        return (shown, shown.last.map { Cursor.encode($0.firstReportID) })
    }

    /// Staff only, checked in the decision's transaction (`Caller`).
    public func decide(postID: Int, action rawAction: String, note rawNote: String?, by caller: Caller) async throws -> (Post, resolved: Int) {
        let action = try Self.action(rawAction)
        let note = try Self.note(rawNote)
        let decided = try await store.decide(postID: postID, action: action, by: caller, note: note)
        // The post's images follow its new visibility at once (the background sync is the safety net).
        await posts.media?.syncVisibility(.post(postID))
        return decided
    }

    /// Staff only; who may ban whom (`mayBan`) is decided in the ban's transaction, on the target's locked row.
    public func ban(accountID: Int, until: Date?, reason rawReason: String, by caller: Caller) async throws -> Account {
        let reason = try TextRules.validate(rawReason, field: "reason", range: 1...500)
        if let until, until <= Date() { throw BoardError.invalidField(field: "until", message: "must be in the future, or null for a permanent ban") }
        return try await store.ban(accountID: accountID, until: until, reason: reason, by: caller) { try Self.mayBan(accountID, $1, by: $0) }
    }

    public func unban(accountID: Int, by caller: Caller) async throws {
        try await store.unban(accountID: accountID, by: caller) { try Self.mayBan(accountID, $1, by: $0) }
    }

    /// Bans and unbans alike (CONTRACT §5): nobody bans or unbans themselves, and only an admin bans or
    /// unbans a moderator or an admin (`target`: the role of account `accountID`).
    static func mayBan(_ accountID: Int, _ target: Role, by identity: Identity) throws {
        guard accountID != identity.accountID else { throw BoardError.forbidden("you cannot ban or unban yourself") }
        if target != .member && identity.account.role != .admin {
            throw BoardError.forbidden("only an admin may ban or unban a moderator or admin")
        }
    }

    public func log(_ identity: Identity, before: Int?, limit: Int) async throws -> (entries: [ModerationLogEntry], nextCursor: String?) {
        try identity.requireModerator()
        let rows = try await store.log(before: before, limit: limit + 1)
        guard rows.count > limit else { return (rows, nil) }
        let shown = Array(rows.prefix(limit))
        return (shown, shown.last.map { Cursor.encode($0.id) })
    }

    static func note(_ raw: String?) throws -> String? {
        try raw.map { try TextRules.validate($0, field: "note", range: 0...500) }.flatMap { $0.isEmpty ? nil : $0 }
    }

    // MARK: Operators (the `weatherboard` command)

    public func setRole(username: String, role: Role) async throws -> Account {
        guard let account = try await store.setRole(username: username.lowercased(), role: role) else {
            throw BoardError.notFound("account '\(username)'")
        }
        return account
    }

    public func addTerm(_ raw: String) async throws -> String {
        let term = TermFilter.normalize(raw)
        guard !term.isEmpty, term.unicodeScalars.count <= 100 else {
            throw BoardError.invalidField(field: "term", message: "must be 1–100 characters")
        }
        try await store.addTerm(term)
        return term
    }

    public func removeTerm(_ raw: String) async throws -> Bool {
        try await store.removeTerm(TermFilter.normalize(raw))
    }

    public func terms() async throws -> [String] {
        try await store.terms()
    }
}
