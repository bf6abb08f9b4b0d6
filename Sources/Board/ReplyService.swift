import Foundation
import Hashing
import RateLimit
import Vocabulary

/// The rules of CONTRACT §13 for replies: the text rules and term filter of posts, bans, idempotent and rate-limited
/// creation, visibility that follows the post, edits with revisions, soft deletes, and the inbox.
public struct ReplyService: Sendable {
    let store: PostgresReplyStore
    let rateLimiter: RateLimiter
    let filter: any ContentFilter

    public init(store: PostgresReplyStore, rateLimiter: RateLimiter, filter: any ContentFilter = NoContentFilter()) {
        self.store = store
        self.rateLimiter = rateLimiter
        self.filter = filter
    }

    static let bodyLength = 1...1000

    // MARK: Create

    /// Replies to post `postID`: 404 for a post the caller can't see; 403 `forbidden` for one it can see that does not
    /// behave as visible to it (hidden, removed: its replies are out of view, so a new one would be too). Decided on the
    /// post's locked row, so a reply never lands visible on a post removed meanwhile. The caller's session is checked
    /// in the same transaction, first (`Caller`); the reply's own input before it.
    public func create(postID: Int, body raw: String?, by caller: Caller, idempotencyKey: String?) async throws -> (Reply, replayed: Bool) {
        guard let raw else { throw BoardError.invalidField(field: "body", message: "is required") }
        let body = try TextRules.validate(raw, field: "body", range: Self.bodyLength)
        let key = try idempotencyKey.map { try IdempotencyKey(scope: "", key: $0, requestHash: Digest.sha256Hex("\(postID)\u{1F}\(body)")) }
        let held = try await filter.shouldHold([body])
        let limiter = rateLimiter
        return try await store.create(postID: postID, body: body, held: held, by: caller) { identity in
            try identity.requireNotBanned()
            let policy: RateLimitPolicy = identity.account.kind == .anonymous ? .anonymousReplying : .registeredReplying
            return (key?.scoped("reply:\(identity.accountID)"), Admission(limiter, policy, subject: "\(identity.accountID)"))
        } check: { access, identity in
            try Self.requireOpen(access, viewer: Viewer(identity))
        }
    }

    /// A post takes replies where it behaves as visible to the replier (`Visibility.treatsAsVisible`: the author's own
    /// held post does, so the hold cannot be probed).
    static func requireOpen(_ post: PostAccess, viewer: Viewer) throws {
        try PostService.requireVisible(post, viewer: viewer)
        guard Visibility(viewer).treatsAsVisible(post.state, authorID: post.authorID) else {
            throw BoardError.forbidden("this post is not shown to everyone, so it takes no replies")
        }
    }

    // MARK: Read

    /// A page of post `postID`'s replies after `after`, oldest first. 404 for a post the caller can't see; a post that
    /// does not behave as visible to the caller has its replies out of view (an empty list), except for moderators.
    public func list(postID: Int, after: Int?, limit: Int, viewer: Viewer) async throws -> (replies: [Reply], nextCursor: String?) {
        let rows = try await store.list(postID: postID, after: after, limit: limit + 1, viewer: viewer) { post, viewer in
            try PostService.requireVisible(post, viewer: viewer)
            return Visibility(viewer).showsReplies(of: post.state, authorID: post.authorID)
        }
        return Self.page(rows, limit: limit)
    }

    static func page(_ rows: [Reply], limit: Int) -> (replies: [Reply], nextCursor: String?) {
        guard rows.count > limit else { return (rows, nil) }
        let shown = Array(rows.prefix(limit))
        return (shown, shown.last.map { Cursor.encode($0.id) })
    }

    /// One reply, or `notFound` when `viewer` may not see it.
    public func reply(id: Int, viewer: Viewer) async throws -> Reply {
        let (found, viewer) = try await store.read(id: id, viewer: viewer)
        guard let reply = found, reply.isShown(to: viewer) else { throw BoardError.notFound("reply") }
        return reply
    }

    /// The caller's inbox (replies to its posts by others, newest first) and its unread count; `unauthenticated`
    /// without a caller. A token still to be checked is checked in the page's statement.
    public func inbox(_ viewer: Viewer, before: Int?, limit: Int) async throws -> Inbox {
        let (rows, unread, _) = try await store.inbox(viewer, before: before, limit: limit + 1)
        let shown = Array(rows.prefix(limit))
        return Inbox(
            replies: shown, nextCursor: rows.count > limit ? shown.last.map { Cursor.encode($0.id) } : nil,
            unread: min(unread, PostgresReplyStore.unreadCap), unreadCapped: unread > PostgresReplyStore.unreadCap
        )
    }

    /// Marks the caller's inbox read up to reply `upTo` (one of the replies to its posts); answers the unread count
    /// after, as `inbox` does.
    public func markRead(by caller: Caller, upTo: Int) async throws -> (unread: Int, capped: Bool) {
        guard let unread = try await store.markRead(by: caller, upTo: upTo) else {
            throw BoardError.invalidField(field: "upTo", message: "names no reply in your inbox")
        }
        return (min(unread, PostgresReplyStore.unreadCap), unread > PostgresReplyStore.unreadCap)
    }

    public func revisions(replyID: Int) async throws -> [ReplyRevision] {
        try await store.revisions(replyID: replyID)
    }

    // MARK: Edit and delete

    /// Edits a reply's body (its author only, not while banned). Serialized per reply; every edit keeps one revision;
    /// `precondition` (the API's `If-Match`) refuses a stale edit with `preconditionFailed` and changes nothing.
    public func update(id: Int, body raw: String?, precondition: VersionPrecondition?, by caller: Caller) async throws -> Reply {
        let body = Result { () throws -> String in
            guard let raw else { throw BoardError.invalidField(field: "body", message: "is required") }
            return try TextRules.validate(raw, field: "body", range: Self.bodyLength)
        }
        let rule = try await filter.holdRule()
        return try await store.edit(id: id, by: caller) { reply, identity in
            try identity.requireNotBanned()
            guard !reply.deleted, reply.isShown(to: Viewer(identity)) else { throw BoardError.notFound("reply") }
            guard reply.authorID == identity.accountID else { throw BoardError.notOwner }
            let body = try body.get()
            if let precondition, !precondition.matches(reply.version) { throw BoardError.preconditionFailed }
            guard body != reply.body else { return nil }
            return (body, rule.holds([body]))
        }
    }

    /// Soft delete by the author (repeatable: 204 again) or a moderator (logged), decided on the reply's locked row in
    /// a transaction that checks the caller first (`Caller`). A reply the caller can't see is 404.
    public func delete(id: Int, by caller: Caller) async throws {
        _ = try await store.delete(id: id, by: caller) { reply, identity in
            try PostDeletion.decide(
                authorID: reply.authorID, deleted: reply.deleted, shown: reply.isShown(to: Viewer(identity)), what: "reply", by: identity
            )
        }
    }
}

/// A page of the inbox (CONTRACT §13).
public struct Inbox: Sendable {
    public var replies: [Reply]
    public var nextCursor: String?
    /// Unread replies, counted up to `PostgresReplyStore.unreadCap`; `unreadCapped` when there are more.
    public var unread: Int
    public var unreadCapped: Bool
}
