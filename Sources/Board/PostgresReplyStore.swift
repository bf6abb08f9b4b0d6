import Database
import Foundation

/// Replies in PostgreSQL (sql/0026_replies.sql). A post's replies are a keyset walk of `replies_post_idx` oldest first,
/// the inbox one of `replies_inbox_idx` newest first; each reads its post's state with the reply, so a post that is not
/// shown takes its replies out of view in the same statement.
public struct PostgresReplyStore: Sendable {
    let database: PostgresPool
    /// Standbys for the reads a standby may serve (CONTRACT §12); nil: everything on `database`.
    let reads: ReplicaRouter?
    /// Where a reply's notification is queued, in the reply's transaction (CONTRACT §14).
    let push: PushQueue

    public init(database: PostgresPool, reads: ReplicaRouter? = nil, push: PushQueue = .off) {
        self.database = database
        self.reads = reads
        self.push = push
    }

    /// Runs `body` on the pool `viewer`'s reads go to (`ReplicaRouter`), or on the primary; `body` gets the reader.
    /// With standbys a token still to be checked is checked first, on the primary (`SessionGate.checked`); without,
    /// `body` checks it inside its first statement (`SessionGate.read`).
    func routed<T: Sendable>(_ viewer: Viewer, _ body: @escaping @Sendable (PostgresConnection, Viewer) throws -> T) async throws -> T {
        guard let reads else { return try await database.withConnection { try body($0, viewer) } }
        let viewer = try await SessionGate.checked(viewer)
        return try await reads.read(viewer.reads) { pool in try await pool.withConnection { try body($0, viewer) } }
    }

    /// Replies with their author's name and their post's title and state. The author and the post are LATERAL
    /// subqueries behind `OFFSET 0`, which the planner can neither flatten nor start from: every statement walks
    /// `replies` first, in the order its index gives. As plain joins, a generic plan of the inbox on a board of few
    /// posts started from the newest visible posts and gathered all 80,000 of an author's replies to sort them
    /// (`RepliesPlanTests`, in CI).
    static let select = """
        SELECT r.id, r.post_id, r.post_author_id, r.author_id, a.display_name AS author_name, r.body, r.status, r.hidden_reason,
               (r.deleted_at IS NOT NULL) AS deleted, r.created_at, r.updated_at, r.edited, r.version,
               p.title AS post_title, p.status AS post_status, p.hidden_reason AS post_hidden_reason, (p.deleted_at IS NOT NULL) AS post_deleted
        FROM replies r
        CROSS JOIN LATERAL (\(PlanTrick.fenced("SELECT display_name FROM accounts WHERE id = r.author_id"))) a
        CROSS JOIN LATERAL (\(PlanTrick.fenced("SELECT title, status, hidden_reason, deleted_at FROM posts WHERE id = r.post_id"))) p
        """

    static func reply(from row: PostgresRow) throws -> Reply {
        Reply(
            id: try row.decode(Int.self, at: 0),
            postID: try row.decode(Int.self, at: 1),
            postAuthorID: try row.decode(Int.self, at: 2),
            authorID: try row.decode(Int.self, at: 3),
            authorDisplayName: try row.decode(String.self, at: 4),
            body: try row.decode(String.self, at: 5),
            status: try UnknownStoredValue.decode(PostStatus.self, row.decode(String.self, at: 6), column: "replies.status"),
            hiddenReason: try row.decode(String?.self, at: 7),
            deleted: try row.decode(Bool.self, at: 8),
            createdAt: try row.decode(Date.self, at: 9),
            updatedAt: try row.decode(Date.self, at: 10),
            edited: try row.decode(Bool.self, at: 11),
            version: try row.decode(Int.self, at: 12),
            postTitle: try row.decode(String?.self, at: 13),
            postState: ContentState(
                status: try UnknownStoredValue.decode(PostStatus.self, row.decode(String.self, at: 14), column: "posts.status"),
                hiddenReason: try row.decode(String?.self, at: 15),
                deleted: try row.decode(Bool.self, at: 16)
            )
        )
    }

    static func byID(_ id: Int) -> SQLQuery { "\(raw: select) WHERE r.id = \(id)" }

    static func replies(_ rows: some Sequence<PostgresRow>) throws -> [Reply] { try rows.map(reply(from:)) }

    /// One reply for a reader, possibly from a standby fresh enough for `viewer`.
    public func read(id: Int, viewer: Viewer) async throws -> (Reply?, Viewer) {
        try await routed(viewer) { connection, viewer in
            let (rows, reader) = try SessionGate.read(on: connection, for: viewer) { _ in Self.byID(id) }
            return (try Self.replies(rows).first, reader)
        }
    }

    // MARK: Create

    /// Inserts a reply in one transaction: the caller's session is checked first, holding its rows (`Caller`: a
    /// logout, a ban or an account deletion in progress waits for the reply, or the reply sees it), and `allow` decides
    /// from who it is (a ban, the idempotency key's scope, the rate limit). Then the post's row is locked (NO KEY
    /// UPDATE), so `check` decides on the post as it is until the reply commits: a moderator's removal, a deletion or a
    /// hide waits for it, and then takes it out of view with the post. The lock also orders the replies of one post
    /// (ids in commit order) and keeps `reply_count` exact. A held reply (`status` hidden) gets the term filter's
    /// report. With an idempotency key a replay returns the reply the first request made; only a new reply is charged
    /// to the admission.
    public func create(
        postID: Int, body: String, held: Bool, by caller: Caller,
        allow: @escaping @Sendable (Identity) throws -> (idempotency: IdempotencyKey?, admission: Admission),
        check: @escaping @Sendable (PostAccess, Identity) throws -> Void
    ) async throws -> (Reply, replayed: Bool) {
        try await database.transaction { connection in
            let identity = try caller.identity(on: connection)
            let authorID = identity.accountID
            let (idempotency, admission) = try allow(identity)
            if let idempotency, case .replay(let replyID, let requestHash) = try idempotency.claim(on: connection) {
                guard requestHash == idempotency.requestHash, let existing = try Self.replies(connection.query(Self.byID(replyID))).first else {
                    throw BoardError.idempotencyConflict
                }
                return (existing, true)
            }
            guard let row = try connection.query(
                "SELECT \(raw: PostgresPostStore.accessColumns) FROM posts WHERE id = \(postID) FOR NO KEY UPDATE"
            ).first else { throw BoardError.notFound("post") }
            let access = try PostgresPostStore.access(from: row)
            let postAuthorID = access.authorID
            try check(access, identity)
            try admission.admit(on: connection)
            let id = try connection.query(
                """
                INSERT INTO replies (post_id, post_author_id, author_id, body, status, hidden_reason)
                VALUES (\(postID), \(postAuthorID), \(authorID), \(body), \(held ? "hidden" : "visible"), \(held ? "filter" : nil))
                RETURNING id
                """
            )[0].decode(Int.self, "id")
            if held { try Self.queueForFilter(replyID: id, on: connection) }
            try idempotency?.complete(resourceID: id, on: connection)
            let reply = try Self.replies(connection.query(Self.byID(id)))[0]
            try push.replyBecameVisible(reply, on: connection)
            return (reply, false)
        }
    }

    /// Files the term filter's report on a held reply, so it shows up in the moderation queue.
    static func queueForFilter(replyID: Int, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO reports (post_id, reply_id, reporter_id, reason, reported_title, reported_body)
            SELECT post_id, id, NULL, 'filter', NULL, body FROM replies WHERE id = \(replyID)
            """
        )
    }

    // MARK: Read

    /// What decides who may see post `postID` (`notFound` when there is none), and a page of its replies after `after`, oldest first:
    /// for moderators every reply, deleted ones included; for anyone else visible replies and the reader's own (not
    /// deleted), without authors the reader blocks. `decide` gets the post's access and the reader first (a token
    /// still to be checked is checked in that statement) and returns whether to read replies at all (it throws to
    /// refuse); both run on one connection.
    public func list(
        postID: Int, after: Int?, limit: Int, viewer: Viewer, decide: @escaping @Sendable (PostAccess, Viewer) throws -> Bool
    ) async throws -> [Reply] {
        try await routed(viewer) { connection, viewer in
            let (rows, reader) = try SessionGate.read(on: connection, for: viewer) { _ in PostgresPostStore.accessQuery(postID) }
            guard let row = rows.first else { throw BoardError.notFound("post") }
            guard try decide(PostgresPostStore.access(from: row), reader) else { return [] }
            return try Self.replies(connection.query(Self.listQuery(postID: postID, after: after, limit: limit, viewer: reader)))
        }
    }

    /// A page of a post's replies after `after`, oldest first, as `viewer` may see them (`list`).
    static func listQuery(postID: Int, after: Int?, limit: Int, viewer: Viewer) -> SQLQuery {
        var sql: SQLQuery = "\(raw: Self.select) WHERE \(PlanTrick.equal("r.post_id", postID)) AND r.id > \(after ?? 0)"
        let visibility = Visibility(viewer)
        sql.append(" AND ")
        sql.append(visibility.condition("r"))
        if let me = visibility.account {
            sql.append(" AND NOT EXISTS (SELECT 1 FROM blocks b WHERE b.blocker_id = \(me) AND b.blocked_id = r.author_id)" as SQLQuery)
        }
        // A range, not `=`, and the index's own order (post_id, id). A generic plan estimates `post_id = $1` from the
        // average post (a handful of replies), and for so few rows it may as well collect them all and sort them, or
        // walk the primary key from the cursor and filter: fine for most posts, ruinous for the one with 10,000 replies.
        // A range is estimated at a fixed share of the table, for which only the ordered index walk that stops after
        // a page is cheap (`RepliesPlanTests`; `PostgresStreamStore.postsOf` does the same).
        sql.append(" ORDER BY r.post_id, r.id")
        return sql.page(limit: limit)
    }

    /// The conditions of an inbox row: a visible reply by someone else (the partial index's predicate) on a post of
    /// `me`'s that acts as visible to `me` (`p`, the reply's post: `Visibility.treatedAsVisibleByAuthor`), by an author `me` does not block. `me` as a range, for
    /// the reason `listQuery` gives: an author with 100,000 replies must be walked in order, not collected and sorted.
    static func inboxConditions(_ me: SQLQuery) -> SQLQuery {
        var sql = inboxReplyConditions(me)
        sql.append(" AND ")
        sql.append(Visibility.treatedAsVisibleByAuthor("p"))
        return sql
    }

    /// `inboxConditions` on the reply alone: columns `replies_inbox_idx` holds (sql/0027), so a walk that needs no
    /// more of a reply never reads the replies' heap. The authors `me` blocks are read once, into a hash the walk
    /// probes (`NOT IN` an uncorrelated subquery: a "hashed SubPlan"; `blocked_id` is never NULL): a `NOT EXISTS` probed
    /// `blocks_pkey` once a row, 200 of the unread count's 500 buffers.
    static func inboxReplyConditions(_ me: SQLQuery) -> SQLQuery {
        """
        \(PlanTrick.equal("r.post_author_id", me)) AND r.status = 'visible' AND r.deleted_at IS NULL AND r.author_id <> r.post_author_id
          AND r.author_id NOT IN (SELECT b.blocked_id FROM blocks b WHERE b.blocker_id = \(me))
        """
    }

    /// The most unread replies the inbox counts: a badge shows "99+" past it, and counting stays a page's work.
    public static let unreadCap = 100

    /// A page of `me`'s inbox before `before`, newest first, and its unread count (at most `unreadCap` + 1: more
    /// than the cap), read on one connection, and the reader: a token still to be checked is checked in the page's
    /// statement. `unauthenticated` for a reader with no account.
    public func inbox(_ viewer: Viewer, before: Int?, limit: Int) async throws -> (replies: [Reply], unread: Int, viewer: Viewer) {
        try await routed(viewer) { connection, viewer in
            guard Visibility(viewer).account != nil else { throw BoardError.unauthenticated }
            let (rows, reader) = try SessionGate.read(on: connection, for: viewer) {
                Self.inboxQuery(of: Visibility($0).account ?? "NULL", before: before, limit: limit)
            }
            guard let id = reader.accountID else { throw BoardError.unauthenticated }
            return (try Self.replies(rows), try Self.unread(of: id, on: connection), reader)
        }
    }

    /// `inboxQuery` of account `me`.
    static func inboxQuery(of me: Int, before: Int?, limit: Int) -> SQLQuery {
        inboxQuery(of: "\(me)" as SQLQuery, before: before, limit: limit)
    }

    /// A page of `me`'s inbox before `before`, newest first; `me` in SQL (`Visibility.account`).
    static func inboxQuery(of me: SQLQuery, before: Int?, limit: Int) -> SQLQuery {
        var sql: SQLQuery = "\(raw: Self.select) WHERE "
        sql.append(Self.inboxConditions(me))
        if let before { sql.append(" AND r.id < \(before)" as SQLQuery) }
        sql.append(" ORDER BY r.post_author_id, r.id DESC")  // the inbox index's order (see `listQuery`)
        return sql.page(limit: limit)
    }

    /// `me`'s unread inbox replies, counted up to `unreadCap` + 1. Unread replies are the newest of the inbox (ids above
    /// the read marker), so they are counted among its newest `unreadCap` + 1 rows: the same ordered walk as the first
    /// page, never a count of everything above the marker (which a plan could read by bitmap and sort). The walk reads
    /// the inbox index alone (it holds each reply's post and author, sql/0027); `me`'s posts that are not shown (a
    /// reply's post is one of `me`'s) are read once, from `posts_unshown_author_idx`, into a hash. No reply and no post
    /// is read a row: a probe of `posts_public_idx` a reply read the post's heap page whenever it was not all-visible,
    /// and every write of a post (a reply counted, a helpful mark) clears that.
    static func unreadQuery(of me: Int) -> SQLQuery {
        var sql: SQLQuery = """
            SELECT count(*) FILTER (WHERE newest.id > (SELECT inbox_read_upto FROM accounts WHERE id = \(me))) AS n FROM (
                SELECT r.id FROM replies r WHERE\u{20}
            """
        sql.append(inboxReplyConditions("\(me)"))
        // `posts_unshown_author_idx`'s predicate, then the rule: of those, the ones that do not act as visible to `me`.
        sql.append(" AND r.post_id NOT IN (SELECT u.id FROM posts u WHERE u.author_id = \(me) AND (u.status <> 'visible' OR u.deleted_at IS NOT NULL) AND NOT " as SQLQuery)
        sql.append(Visibility.treatedAsVisibleByAuthor("u"))
        sql.append(")")
        sql.append(" ORDER BY r.post_author_id, r.id DESC LIMIT \(raw: String(Self.unreadCap + 1))) newest" as SQLQuery)
        return sql
    }

    static func unread(of me: Int, on connection: PostgresConnection) throws -> Int {
        try connection.query(Self.unreadQuery(of: me))[0].decode(Int.self, "n")
    }

    /// Moves the caller's read marker up to reply `upTo` (never back: two devices marking at once keep the later), and
    /// answers the unread count after; nil when `upTo` is not a reply to one of the caller's posts. The caller is
    /// checked first, in the same transaction (`Caller`), holding its session; the update then holds the account.
    public func markRead(by caller: Caller, upTo: Int) async throws -> Int? {
        try await database.transaction { connection in
            let me = try caller.identity(on: connection, lock: .session).accountID
            let moved = try connection.query(
                """
                UPDATE accounts a SET inbox_read_upto = greatest(a.inbox_read_upto, r.id)
                FROM replies r WHERE a.id = \(me) AND a.deleted_at IS NULL AND r.id = \(upTo) AND r.post_author_id = \(me)
                RETURNING a.id
                """
            )
            guard !moved.isEmpty else { return nil }
            return try Self.unread(of: me, on: connection)
        }
    }

    // MARK: Edit and delete

    /// Edits a reply on its locked row (edits of one reply happen one after another): `decide` gets the reply as it is
    /// now and returns the new body and whether the term filter holds it, or nil when nothing changes. A write keeps
    /// the replaced version as one revision and bumps `version`. Returns the reply after. `caller` is checked first, in
    /// the same transaction (`Caller`), and `decide` gets who it is.
    public func edit(
        id: Int, by caller: Caller, _ decide: @escaping @Sendable (Reply, Identity) throws -> (body: String, held: Bool)?
    ) async throws -> Reply {
        try await database.fencedTransaction(reads) { connection, fence in
            let identity = try caller.identity(on: connection)
            guard let current = try Self.replies(connection.query("\(raw: Self.select) WHERE r.id = \(id) FOR UPDATE OF r")).first else {
                throw BoardError.notFound("reply")
            }
            guard let edit = try decide(current, identity) else { return current }
            try connection.execute(
                "INSERT INTO reply_revisions (reply_id, body, version) SELECT id, body, version FROM replies WHERE id = \(id)"
            )
            let hold = edit.held && current.status == .visible
            try connection.execute(
                """
                UPDATE replies SET body = \(edit.body), edited = true, updated_at = now(), version = version + 1,
                    status = CASE WHEN \(hold) THEN 'hidden' ELSE status END,
                    hidden_reason = CASE WHEN \(hold) THEN 'filter' ELSE hidden_reason END
                WHERE id = \(id)
                """
            )
            if hold {
                try Self.queueForFilter(replyID: id, on: connection)
                fence.fence()
            }
            return try Self.replies(connection.query(Self.byID(id)))[0]
        }
    }

    /// Deletes a reply as `decide` says, on its locked row, in one transaction that checks `caller` first (`Caller`):
    /// the author's soft delete, or a moderator's with its log entry in one statement. Answers what was done.
    public func delete(id: Int, by caller: Caller, _ decide: @escaping @Sendable (Reply, Identity) throws -> PostDeletion) async throws -> PostDeletion {
        try await database.fencedTransaction(reads) { connection, fence in
            let identity = try caller.identity(on: connection)
            guard let reply = try Self.replies(connection.query("\(raw: Self.select) WHERE r.id = \(id) FOR UPDATE OF r")).first else {
                throw BoardError.notFound("reply")
            }
            let deletion = try decide(reply, identity)
            switch deletion {
            case .none: return .none
            case .own:
                try connection.execute("UPDATE replies SET deleted_at = now(), deleted_by = \(identity.accountID) WHERE id = \(id) AND deleted_at IS NULL")
            case .logged:
                guard try PostgresModerationStore.deleteLogged(.reply(id), by: identity.accountID, on: connection) else { return .none }
            }
            fence.fence()
            return deletion
        }
    }

    public func revisions(replyID: Int) async throws -> [ReplyRevision] {
        try await database.query("SELECT body, replaced_at FROM reply_revisions WHERE reply_id = \(replyID) ORDER BY id").map {
            ReplyRevision(body: try $0.decode(String.self, "body"), replacedAt: try $0.decode(Date.self, "replaced_at"))
        }
    }
}
