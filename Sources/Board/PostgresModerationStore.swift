import Database
import Foundation

/// Reports, decisions, bans, the log and blocked terms in PostgreSQL.
public struct PostgresModerationStore: ModerationStore {
    let database: PostgresPool
    /// Whose read fence a decision or an auto-hide raises (`ReadFence`); nil without standbys.
    let reads: ReplicaRouter?
    /// Where a decision's notifications are queued, in the decision's transaction (CONTRACT §14).
    let push: PushQueue

    public init(database: PostgresPool, reads: ReplicaRouter? = nil, push: PushQueue = .off) {
        self.database = database
        self.reads = reads
        self.push = push
    }

    static let reportColumns = "r.id, r.post_id, r.reply_id, r.reporter_id, r.reason, r.note, r.reported_title, r.reported_body, r.status, r.created_at"

    static func report(from row: PostgresRow) throws -> Report {
        Report(
            id: try row.decode(Int.self, "id"),
            postID: try row.decode(Int.self, "post_id"),
            replyID: try row.decode(Int?.self, "reply_id"),
            reporterID: try row.decode(Int?.self, "reporter_id"),
            reason: try UnknownStoredValue.decode(ReportReason.self, row.decode(String.self, "reason"), column: "reports.reason"),
            note: try row.decode(String?.self, "note"),
            reportedTitle: try row.decode(String?.self, "reported_title"),
            reportedBody: try row.decode(String.self, "reported_body"),
            outcome: try UnknownStoredValue.decode(ReportOutcome.self, row.decode(String.self, "status"), column: "reports.status"),
            createdAt: try row.decode(Date.self, "created_at")
        )
    }

    public func report(
        postID: Int, by caller: Caller, reason: ReportReason, note: String?, policy: ReportPolicy,
        check: @escaping @Sendable (ReportedContent, Identity) throws -> Admission
    ) async throws -> (report: Report, created: Bool, hid: Bool) {
        try await database.fencedTransaction(reads) { connection, fence in
            try Self.file(.post(postID), by: caller, reason: reason, note: note, policy: policy, check: check, fence: fence, on: connection)
        }
    }

    /// Files `caller`'s report on `target` with a snapshot of it, once per account and target, in the caller's
    /// transaction, which checks the caller first (`Caller`). The target's row is locked next, so concurrent reports on
    /// it are counted one after another and the reporter's earlier report cannot appear behind this one's back; `check`
    /// decides on it as locked (it throws to refuse). A repeat answers the earlier report and is not counted, a new one
    /// is charged to the admission `check` answers first (a refusal rolls everything back). When the trusted distinct
    /// reporters of its open reports reach `policy.hideThreshold`, a visible target is hidden at once (`hid`), and
    /// `fence` raised (CONTRACT §12).
    static func file(
        _ target: DecisionTarget, by caller: Caller, reason: ReportReason, note: String?, policy: ReportPolicy,
        check: (ReportedContent, Identity) throws -> Admission, fence: ReadFence.Request, on connection: PostgresConnection
    ) throws -> (report: Report, created: Bool, hid: Bool) {
        let identity = try caller.identity(on: connection)
        let reporterID = identity.accountID
        let table = target.table, id = target.id
        let content: ReportedContent
        switch target {
        case .post:
            guard let row = try connection.query("SELECT \(raw: PostgresPostStore.accessColumns) FROM posts WHERE id = \(id) FOR UPDATE").first else {
                throw BoardError.notFound("post")
            }
            content = .post(try PostgresPostStore.access(from: row))
        case .reply:
            guard let reply = try PostgresReplyStore.replies(connection.query("\(raw: PostgresReplyStore.select) WHERE r.id = \(id) FOR UPDATE OF r")).first else {
                throw BoardError.notFound("reply")
            }
            content = .reply(reply)
        }
        let admission = try check(content, identity)
        let status = content.status
        var earlier: SQLQuery = "SELECT \(raw: Self.reportColumns) FROM reports r WHERE r.reporter_id = \(reporterID) AND "
        earlier.append(target.reports)
        if let row = try connection.query(earlier).first { return (try Self.report(from: row), false, false) }
        try admission.admit(on: connection)
        let returning = Self.reportColumns.replacingOccurrences(of: "r.", with: "")
        let inserted: PostgresRows = switch target {
        case .post:
            try connection.query(
                """
                INSERT INTO reports (post_id, reporter_id, reason, note, reported_title, reported_body, reported_media)
                SELECT id, \(reporterID), \(reason.rawValue), \(note), title, body, \(raw: MediaRecords.snapshot) FROM posts WHERE id = \(id)
                RETURNING \(raw: returning)
                """
            )
        case .reply:
            try connection.query(
                """
                INSERT INTO reports (post_id, reply_id, reporter_id, reason, note, reported_title, reported_body)
                SELECT post_id, id, \(reporterID), \(reason.rawValue), \(note), NULL, body FROM replies WHERE id = \(id)
                RETURNING \(raw: returning)
                """
            )
        }
        let report = try Self.report(from: inserted[0])
        guard status == .visible else { return (report, true, false) }
        var trusted: SQLQuery = "SELECT count(DISTINCT r.reporter_id) AS n FROM reports r JOIN accounts a ON a.id = r.reporter_id WHERE r.status = 'open' AND a.deleted_at IS NULL AND "
        trusted.append(TrustedAccount.condition("a", ageSeconds: policy.trustAgeSeconds))
        trusted.append(" AND ")
        trusted.append(target.reports)
        if try connection.query(trusted)[0].decode(Int.self, "n") >= policy.hideThreshold {
            let hid = try connection.execute("UPDATE \(raw: table) SET status = 'hidden', hidden_reason = 'reports' WHERE id = \(id) AND status = 'visible'") > 0
            if hid { fence.fence() }
            return (report, true, hid)
        }
        return (report, true, false)
    }

    public func reports(byReporter reporterID: Int, before: Int?, limit: Int) async throws -> [Report] {
        var sql: SQLQuery = "SELECT \(raw: Self.reportColumns) FROM reports r WHERE r.reporter_id = \(reporterID)"
        if let before { sql.append(" AND r.id < \(before)" as SQLQuery) }
        sql.append(" ORDER BY r.id DESC LIMIT \(limit)" as SQLQuery)
        return try await database.query(sql).map(Self.report(from:))
    }

    /// The targets of a queue page (posts and replies): those whose first open report comes after the cursor, oldest
    /// first. It walks `moderation_queue` (sql/0019, sql/0026; kept exact by triggers on `reports`), so a page reads
    /// about `limit` rows however many reports are open (`QueuePlanTests`).
    static func queuePage(after: Int?, limit: Int) -> SQLQuery {
        """
        SELECT post_id, reply_id, first_report_id AS first_id, first_reported_at AS first_at
        FROM moderation_queue WHERE first_report_id > \(after ?? 0)
        ORDER BY first_report_id LIMIT \(limit)
        """
    }

    /// The open reports on the posts `postIDs` themselves (not on their replies), found through an index on their post
    /// ids (every one is listed).
    static func openReports(postIDs: [String]) -> SQLQuery {
        "SELECT \(raw: reportColumns) FROM reports r WHERE r.status = 'open' AND r.reply_id IS NULL AND r.post_id = ANY(\(postIDs)::int8[]) ORDER BY r.id"
    }

    public func queue(after: Int?, limit: Int, viewer: Int?) async throws -> [QueueItem] {
        try await database.withConnection { connection in
            try Self.items(of: connection.query(Self.queuePage(after: after, limit: limit)), viewer: viewer, on: connection)
        }
    }

    /// The queue items that are in the queue now for posts `postIDs` (their own reports) and replies `replyIDs` (the
    /// moderation stream's `report` events).
    public func queueItems(postIDs: [Int], replyIDs: [Int] = []) async throws -> [QueueItem] {
        guard !postIDs.isEmpty || !replyIDs.isEmpty else { return [] }
        return try await database.withConnection { connection in
            try Self.items(
                of: connection.query(
                    """
                    SELECT post_id, reply_id, first_report_id AS first_id, first_reported_at AS first_at FROM moderation_queue
                    WHERE (post_id = ANY(\(postIDs.map(String.init))::int8[]) AND reply_id IS NULL)
                       OR reply_id = ANY(\(replyIDs.map(String.init))::int8[])
                    ORDER BY first_report_id
                    """
                ),
                viewer: nil, on: connection
            )
        }
    }

    /// Queue items from rows of `moderation_queue` (`post_id`, `reply_id`, `first_id`, `first_at`), in the rows' order:
    /// each with its post (a reply's item: its post for context, and the reply), open reports and revisions.
    private static func items(of groups: PostgresRows, viewer: Int?, on connection: PostgresConnection) throws -> [QueueItem] {
        guard !groups.isEmpty else { return [] }
        let targets = try groups.map { (post: try $0.decode(Int.self, "post_id"), reply: try $0.decode(Int?.self, "reply_id")) }
        let postIDs = Array(Set(targets.map { String($0.post) }))
        let postTargets = targets.filter { $0.reply == nil }.map { String($0.post) }
        let replyIDs = targets.compactMap { $0.reply.map(String.init) }
        var posts: [Int: Post] = [:]
        for post in try PostgresPostStore.posts(connection.query(PostgresPostStore.withMedia("\(raw: PostgresPostStore.select) WHERE p.id = ANY(\(postIDs)::int8[])", viewer: viewer))) {
            posts[post.id] = post
        }
        var replies: [Int: Reply] = [:]
        var reports: [String: [Report]] = [:]
        var revisions: [Int: [PostRevision]] = [:]
        var replyRevisions: [Int: [ReplyRevision]] = [:]
        if !postTargets.isEmpty {
            for row in try connection.query(Self.openReports(postIDs: postTargets)) {
                let report = try Self.report(from: row)
                reports["p\(report.postID)", default: []].append(report)
            }
            for row in try connection.query(
                "SELECT post_id, weather_type, category, title, body, replaced_at FROM post_revisions WHERE post_id = ANY(\(postTargets)::int8[]) ORDER BY id"
            ) {
                revisions[try row.decode(Int.self, "post_id"), default: []].append(try PostRevision(row: row))
            }
        }
        if !replyIDs.isEmpty {
            for reply in try PostgresReplyStore.replies(connection.query("\(raw: PostgresReplyStore.select) WHERE r.id = ANY(\(replyIDs)::int8[])")) {
                replies[reply.id] = reply
            }
            for row in try connection.query(
                "SELECT \(raw: reportColumns) FROM reports r WHERE r.status = 'open' AND r.reply_id = ANY(\(replyIDs)::int8[]) ORDER BY r.id"
            ) {
                let report = try Self.report(from: row)
                reports["r\(report.replyID ?? 0)", default: []].append(report)
            }
            for row in try connection.query(
                "SELECT reply_id, body, replaced_at FROM reply_revisions WHERE reply_id = ANY(\(replyIDs)::int8[]) ORDER BY id"
            ) {
                replyRevisions[try row.decode(Int.self, "reply_id"), default: []].append(
                    ReplyRevision(body: try row.decode(String.self, "body"), replacedAt: try row.decode(Date.self, "replaced_at"))
                )
            }
        }
        return try zip(groups, targets).compactMap { group, target in
            guard let post = posts[target.post] else { return nil }
            var item = QueueItem(
                post: post, revisions: target.reply == nil ? revisions[target.post] ?? [] : [],
                reports: reports[target.reply.map { "r\($0)" } ?? "p\(target.post)"] ?? [],
                firstReportedAt: try group.decode(Date.self, "first_at"), firstReportID: try group.decode(Int.self, "first_id")
            )
            if let replyID = target.reply {
                guard let reply = replies[replyID] else { return nil }
                item.reply = reply
                item.replyRevisions = replyRevisions[replyID] ?? []
            }
            return item
        }
    }

    public func decide(postID: Int, action: ModerationAction, by caller: Caller, note: String?) async throws -> (Post, resolved: Int) {
        try await database.fencedTransaction(reads) { connection in
            let moderatorID = try Self.moderator(caller, on: connection)
            let resolved = try Self.decide(.post(postID), action: action, moderatorID: moderatorID, note: note, push: push, on: connection)
            let post = try PostgresPostStore.posts(connection.query(PostgresPostStore.byID(postID, viewer: moderatorID)))[0]
            return (post, resolved)
        }
    }

    /// What a decision is on: a post (its own reports) or a reply.
    enum DecisionTarget {
        case post(Int)
        case reply(Int)

        /// The table, the log's target type, and its open reports (constants of this file, never input).
        var table: String { if case .post = self { "posts" } else { "replies" } }
        var logType: ModerationLogTarget { if case .post = self { .post } else { .reply } }
        var id: Int { switch self { case .post(let id), .reply(let id): id } }
        var replyID: Int? { if case .reply(let id) = self { id } else { nil } }
        var reports: SQLQuery {
            switch self {
            case .post(let id): "r.post_id = \(id) AND r.reply_id IS NULL"
            case .reply(let id): "r.reply_id = \(id)"
            }
        }
    }

    /// A moderator's delete of someone else's post or reply and its log entry, in one statement, in the caller's
    /// transaction. False when it was already deleted.
    static func deleteLogged(_ target: DecisionTarget, by moderatorID: Int, on connection: PostgresConnection) throws -> Bool {
        try !connection.query(
            """
            WITH deleted AS (
                UPDATE \(raw: target.table) SET deleted_at = now(), deleted_by = \(moderatorID) WHERE id = \(target.id) AND deleted_at IS NULL RETURNING id
            )
            INSERT INTO moderation_log (moderator_id, action, target_type, target_id)
            SELECT \(moderatorID), \(ModerationLogAction.delete.rawValue), \(target.logType.rawValue), id::text FROM deleted
            RETURNING id
            """
        ).isEmpty
    }

    /// A moderator's decision on the locked row of `target`, in the caller's transaction: `dismiss` unhides an
    /// auto-hidden or filter-held target (a removal stays: only `restore` undoes it), `remove` removes it, `restore`
    /// makes it visible; every open report on it is resolved and the decision logged, and its notifications queued
    /// (`PushQueue.decided`; a reply it lets through for the first time notifies its post's author). Returns the
    /// reports resolved.
    static func decide(
        _ target: DecisionTarget, action: ModerationAction, moderatorID: Int, note: String?, push: PushQueue, on connection: PostgresConnection
    ) throws -> Int {
        let table = target.table, id = target.id
        let postColumn = if case .post = target { "id" } else { "post_id" }
        let current = try connection.query("SELECT status, \(raw: postColumn) AS post_id FROM \(raw: table) WHERE id = \(id) FOR UPDATE")
        guard let status = try current.first?.decode(String.self, "status") else { throw BoardError.notFound(target.logType.rawValue) }
        let postID = try current[0].decode(Int.self, "post_id")
        let outcome: ReportOutcome = action == .remove ? .actioned : .dismissed
        let newStatus: PostStatus? = switch action {
        case .dismiss: status == PostStatus.hidden.rawValue ? .visible : nil
        case .remove: .removed
        case .restore: .visible
        }
        if let newStatus {
            try connection.execute("UPDATE \(raw: table) SET status = \(newStatus.rawValue), hidden_reason = NULL WHERE id = \(id)")
        }
        var resolve: SQLQuery = "UPDATE reports r SET status = \(outcome.rawValue), resolved_at = now(), resolved_by = \(moderatorID) WHERE status = 'open' AND "
        resolve.append(target.reports)
        resolve.append(" RETURNING r.id")
        let resolvedIDs = try connection.query(resolve).map { try $0.decode(Int.self, "id") }
        let changed = newStatus.map { $0.rawValue != status } ?? false
        try push.decided(
            .init(postID: postID, replyID: target.replyID, action: action, changed: changed, reportIDs: resolvedIDs), on: connection
        )
        if push.enabled, case .reply(let replyID) = target, changed, newStatus == .visible,
            let reply = try PostgresReplyStore.replies(connection.query(PostgresReplyStore.byID(replyID))).first
        {
            try push.replyBecameVisible(reply, on: connection)
        }
        try connection.execute(
            """
            INSERT INTO moderation_log (moderator_id, action, target_type, target_id, note)
            VALUES (\(moderatorID), \(ModerationLogAction(action).rawValue), \(target.logType.rawValue), \(String(id)), \(note))
            """
        )
        return resolvedIDs.count
    }

    /// The caller, checked first in the transaction on `connection` (`Caller`), as staff: its id, or `forbidden` /
    /// `accountBanned`.
    static func moderator(_ caller: Caller, on connection: PostgresConnection) throws -> Int {
        let identity = try caller.identity(on: connection)
        try identity.requireModerator()
        return identity.accountID
    }

    /// The caller as staff (`moderator`) who may ban or unban `accountID` (`mayBan`, on the target's role as on its
    /// locked row); `notFound` for no such account.
    static func banner(
        _ caller: Caller, of accountID: Int, mayBan: (Identity, Role) throws -> Void, on connection: PostgresConnection
    ) throws -> Int {
        let identity = try caller.identity(on: connection)
        try identity.requireModerator()
        guard let row = try connection.query("SELECT role FROM accounts WHERE id = \(accountID) AND deleted_at IS NULL FOR UPDATE").first else {
            throw BoardError.notFound("account")
        }
        try mayBan(identity, try UnknownStoredValue.decode(Role.self, row.decode(String.self, "role"), column: "accounts.role"))
        return identity.accountID
    }

    public func ban(
        accountID: Int, until: Date?, reason: String, by caller: Caller, mayBan: @escaping @Sendable (Identity, Role) throws -> Void
    ) async throws -> Account {
        try await database.transaction { connection in
            let moderatorID = try Self.banner(caller, of: accountID, mayBan: mayBan, on: connection)
            let rows = try connection.query(
                """
                UPDATE accounts AS a SET banned = true, banned_until = \(until), ban_reason = \(reason) WHERE id = \(accountID) AND deleted_at IS NULL
                RETURNING \(raw: PostgresAccountStore.columns)
                """
            )
            guard let row = rows.first else { throw BoardError.notFound("account") }
            let note = until.map { "\(reason) (until \($0.formatted(.iso8601)))" } ?? "\(reason) (permanent)"
            try connection.execute(
                "INSERT INTO moderation_log (moderator_id, action, target_type, target_id, note) VALUES (\(moderatorID), \(ModerationLogAction.ban.rawValue), 'account', \(String(accountID)), \(note))"
            )
            return try PostgresAccountStore.account(from: row)
        }
    }

    public func unban(accountID: Int, by caller: Caller, mayBan: @escaping @Sendable (Identity, Role) throws -> Void) async throws {
        try await database.transaction { connection in
            let moderatorID = try Self.banner(caller, of: accountID, mayBan: mayBan, on: connection)
            let changed = try connection.query(
                "UPDATE accounts SET banned = false, banned_until = NULL, ban_reason = NULL WHERE id = \(accountID) AND deleted_at IS NULL RETURNING id"
            )
            guard !changed.isEmpty else { throw BoardError.notFound("account") }
            try connection.execute(
                "INSERT INTO moderation_log (moderator_id, action, target_type, target_id) VALUES (\(moderatorID), \(ModerationLogAction.unban.rawValue), 'account', \(String(accountID)))"
            )
        }
    }

    public func log(before: Int?, limit: Int) async throws -> [ModerationLogEntry] {
        var sql: SQLQuery = "SELECT id, moderator_id, action, target_type, target_id, note, created_at FROM moderation_log WHERE true"
        if let before { sql.append(" AND id < \(before)" as SQLQuery) }
        sql.append(" ORDER BY id DESC LIMIT \(limit)" as SQLQuery)
        return try await database.query(sql).map { row in
            ModerationLogEntry(
                id: try row.decode(Int.self, "id"),
                moderatorID: try row.decode(Int?.self, "moderator_id"),
                action: try UnknownStoredValue.decode(ModerationLogAction.self, row.decode(String.self, "action"), column: "moderation_log.action"),
                targetType: try UnknownStoredValue.decode(
                    ModerationLogTarget.self, row.decode(String.self, "target_type"), column: "moderation_log.target_type"
                ),
                targetID: try row.decode(String.self, "target_id"),
                note: try row.decode(String?.self, "note"),
                createdAt: try row.decode(Date.self, "created_at")
            )
        }
    }

    public func setRole(username: String, role: Role) async throws -> Account? {
        try await database.transaction { connection in
            let rows = try connection.query(
                "UPDATE accounts AS a SET role = \(role.rawValue) WHERE username = \(username) RETURNING \(raw: PostgresAccountStore.columns)"
            )
            guard let row = rows.first else { return nil }
            let account = try PostgresAccountStore.account(from: row)
            try connection.execute(
                "INSERT INTO moderation_log (moderator_id, action, target_type, target_id, note) VALUES (NULL, \(ModerationLogAction.setRole.rawValue), 'account', \(String(account.id)), \(role.rawValue))"
            )
            return account
        }
    }

    public func addTerm(_ term: String) async throws {
        try await database.execute("INSERT INTO blocked_terms (term) VALUES (\(term)) ON CONFLICT DO NOTHING")
    }

    public func removeTerm(_ term: String) async throws -> Bool {
        try await database.execute("DELETE FROM blocked_terms WHERE term = \(term)") > 0
    }

    public func terms() async throws -> [String] {
        try await database.query("SELECT term FROM blocked_terms ORDER BY term").map { try $0.decode(String.self, "term") }
    }
}
