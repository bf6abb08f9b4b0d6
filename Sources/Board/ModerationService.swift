import Foundation
import RateLimit
import Vocabulary

/// CONTRACT §5: reports, the moderator's queue and decisions, bans, the log, roles and blocked terms.
public struct ModerationService: Sendable {
    let store: any ModerationStore
    let posts: PostService
    /// Replies (CONTRACT §13); nil where replies are not served (operator commands).
    let replies: ReplyService?
    let rateLimiter: RateLimiter
    public let policy: ReportPolicy

    public init(store: any ModerationStore, posts: PostService, replies: ReplyService? = nil, rateLimiter: RateLimiter, policy: ReportPolicy) {
        self.replies = replies
        self.store = store
        self.posts = posts
        self.rateLimiter = rateLimiter
        self.policy = policy
    }

    // MARK: Reports

    public func report(postID: Int, reason rawReason: String, note rawNote: String?, by identity: Identity) async throws -> (Report, created: Bool) {
        let (reason, note) = try Self.reportInput(rawReason, rawNote, by: identity)
        // Only posts the reporter can see can be reported (404 otherwise, like reading them).
        // On the primary: a report is a write, and the post it names may be newer than a standby.
        let post = try await posts.post(id: postID, viewer: Viewer(identity, reads: .primary))
        guard post.authorID != identity.accountID else { throw BoardError.forbidden("you cannot report your own post") }
        // Only a new report is counted: a repeat answers the first one (200) without spending the allowance.
        let filed = try await store.report(
            postID: postID, reporterID: identity.accountID, reason: reason, note: note, policy: policy,
            admission: Admission(rateLimiter, .reporting, subject: "\(identity.accountID)")
        )
        // A report may have hidden the post: its images leave the public side at once.
        if filed.created, !post.media.isEmpty { await posts.media?.syncVisibility(.post(postID)) }
        return filed
    }

    /// A report's reason and note, checked, for a reporter that is not banned.
    static func reportInput(_ rawReason: String, _ rawNote: String?, by identity: Identity) throws -> (ReportReason, String?) {
        try identity.requireNotBanned()
        guard let reason = ReportReason(rawValue: rawReason), reason != .filter else {
            throw BoardError.invalidField(field: "reason", message: "must be one of spam, abuse, hate, sexual, misinformation, other")
        }
        return (reason, try rawNote.map { try TextRules.validate($0, field: "note", range: 0...500) }.flatMap { $0.isEmpty ? nil : $0 })
    }

    /// Reports a reply (CONTRACT §13), as a post: only one the reporter can see (404), never one's own (403), once per
    /// account (a repeat answers the first report, 200), a new one counted against the reporting allowance.
    public func reportReply(replyID: Int, reason rawReason: String, note rawNote: String?, by identity: Identity) async throws -> (Report, created: Bool) {
        let (reason, note) = try Self.reportInput(rawReason, rawNote, by: identity)
        guard let replies else { throw BoardError.notFound("reply") }
        // On the primary, as for posts: a report is a write.
        let reply = try await replies.reply(id: replyID, viewer: Viewer(identity, reads: .primary))
        guard reply.authorID != identity.accountID else { throw BoardError.forbidden("you cannot report your own reply") }
        return try await store.reportReply(
            replyID: replyID, reporterID: identity.accountID, reason: reason, note: note, policy: policy,
            admission: Admission(rateLimiter, .reporting, subject: "\(identity.accountID)")
        )
    }

    /// A moderator's decision on a reply (`POST /v1/moderation/replies/{id}/decision`).
    public func decide(replyID: Int, action rawAction: String, note rawNote: String?, by identity: Identity) async throws -> (Reply, resolved: Int) {
        try identity.requireModerator()
        let action = try Self.action(rawAction)
        return try await store.decide(replyID: replyID, action: action, moderatorID: identity.accountID, note: try Self.note(rawNote))
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

    public func decide(postID: Int, action rawAction: String, note rawNote: String?, by identity: Identity) async throws -> (Post, resolved: Int) {
        try identity.requireModerator()
        let action = try Self.action(rawAction)
        let note = try Self.note(rawNote)
        let decided = try await store.decide(postID: postID, action: action, moderatorID: identity.accountID, note: note)
        // The post's images follow its new visibility at once (the background sync is the safety net).
        await posts.media?.syncVisibility(.post(postID))
        return decided
    }

    public func ban(accountID: Int, until: Date?, reason rawReason: String, by identity: Identity) async throws -> Account {
        try identity.requireModerator()
        let reason = try TextRules.validate(rawReason, field: "reason", range: 1...500)
        if let until, until <= Date() { throw BoardError.invalidField(field: "until", message: "must be in the future, or null for a permanent ban") }
        try await requireMayBan(accountID, by: identity)
        return try await store.ban(accountID: accountID, until: until, reason: reason, moderatorID: identity.accountID)
    }

    public func unban(accountID: Int, by identity: Identity) async throws {
        try identity.requireModerator()
        try await requireMayBan(accountID, by: identity)
        try await store.unban(accountID: accountID, moderatorID: identity.accountID)
    }

    /// Bans and unbans alike (CONTRACT §5): nobody bans or unbans themselves, and only an admin bans or
    /// unbans a moderator or an admin.
    func requireMayBan(_ accountID: Int, by identity: Identity) async throws {
        guard accountID != identity.accountID else { throw BoardError.forbidden("you cannot ban or unban yourself") }
        let target = try await posts.accountRole(accountID)
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
