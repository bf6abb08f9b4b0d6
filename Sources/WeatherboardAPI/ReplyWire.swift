import Foundation

/// `POST /v1/posts/{id}/replies` and `PATCH /v1/replies/{id}`.
public struct ReplyRequest: Codable, Sendable {
    public var body: String?
    public init(body: String?) {
        self.body = body
    }
}

/// The reply object of CONTRACT §13.
public struct ReplyResponse: Decodable, Sendable {
    /// The post a reply answers, as the inbox shows it.
    public struct PostSummary: Decodable, Sendable {
        public var id: String
        public var title: String?
        public init(id: String, title: String?) {
            self.id = id
            self.title = title
        }
    }

    public var id: String
    public var postId: String
    public var body: String
    public var author: PostResponse.Author
    /// Its author wrote the post it answers (an app badges the original poster).
    public var isPostAuthor: Bool
    public var createdAt: Date
    public var updatedAt: Date
    public var edited: Bool
    public var isMine: Bool
    /// Shown to its author and to moderators only.
    public var status: String?
    /// Its post's `{id, title}`: in the inbox only.
    public var post: PostSummary?
    /// Its earlier versions: moderators, in the queue only.
    public var revisions: [ReplyRevisionResponse]?

    public init(
        id: String, postId: String, body: String, author: PostResponse.Author, isPostAuthor: Bool, createdAt: Date, updatedAt: Date,
        edited: Bool, isMine: Bool, status: String?, post: PostSummary? = nil, revisions: [ReplyRevisionResponse]? = nil
    ) {
        self.id = id
        self.postId = postId
        self.body = body
        self.author = author
        self.isPostAuthor = isPostAuthor
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.edited = edited
        self.isMine = isMine
        self.status = status
        self.post = post
        self.revisions = revisions
    }
}

/// A previous version of a reply.
public struct ReplyRevisionResponse: Decodable, Sendable {
    public var body: String
    public var replacedAt: Date
    public init(body: String, replacedAt: Date) {
        self.body = body
        self.replacedAt = replacedAt
    }
}

/// `GET /v1/accounts/me/inbox`: a page of replies to the caller's posts, newest first, and how many are unread.
public struct InboxResponse: Decodable, Sendable {
    public var items: [ReplyResponse]
    public var nextCursor: String?
    /// Unread replies, counted up to 100 (`unreadCapped` when there are more: an app shows "99+").
    public var unread: Int
    public var unreadCapped: Bool

    public init(items: [ReplyResponse], nextCursor: String?, unread: Int, unreadCapped: Bool) {
        self.items = items
        self.nextCursor = nextCursor
        self.unread = unread
        self.unreadCapped = unreadCapped
    }
}

/// `POST /v1/accounts/me/inbox/read`: everything up to reply `upTo` (included) is read.
public struct InboxReadRequest: Codable, Sendable {
    public var upTo: String?
    public init(upTo: String?) {
        self.upTo = upTo
    }
}

/// The answer of `POST /v1/accounts/me/inbox/read`: the unread count after.
public struct InboxUnreadResponse: Codable, Sendable {
    public var unread: Int
    public var unreadCapped: Bool
    public init(unread: Int, unreadCapped: Bool) {
        self.unread = unread
        self.unreadCapped = unreadCapped
    }
}

/// `POST /v1/moderation/replies/{id}/decision`.
public struct ReplyDecisionResponse: Decodable, Sendable {
    public var reply: ReplyResponse
    public var resolvedReports: Int
    public init(reply: ReplyResponse, resolvedReports: Int) {
        self.reply = reply
        self.resolvedReports = resolvedReports
    }
}

// MARK: The one encoding of each (keys sorted)

extension ReplyResponse: JSONWritable {
    public var jsonCapacity: Int { 400 + body.utf8.count + (post?.title?.utf8.count ?? 0) + (revisions?.reduce(0) { $0 + 80 + $1.body.utf8.count } ?? 0) }

    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("author", first: true)
        author.write(to: &w)
        w.key("body")
        w.string(body)
        w.key("createdAt")
        w.date(createdAt)
        w.key("edited")
        w.bool(edited)
        w.key("id")
        w.string(id)
        w.key("isMine")
        w.bool(isMine)
        w.key("isPostAuthor")
        w.bool(isPostAuthor)
        if let post {
            w.key("post")
            w.raw("{")
            w.key("id", first: true)
            w.string(post.id)
            w.key("title")
            w.optionalString(post.title)
            w.raw("}")
        }
        w.key("postId")
        w.string(postId)
        if let revisions {
            w.key("revisions")
            w.array(revisions)
        }
        if let status {
            w.key("status")
            w.string(status)
        }
        w.key("updatedAt")
        w.date(updatedAt)
        w.raw("}")
    }
}

extension ReplyRevisionResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("body", first: true)
        w.string(body)
        w.key("replacedAt")
        w.date(replacedAt)
        w.raw("}")
    }
}

extension InboxResponse: JSONWritable {
    public var jsonCapacity: Int { 96 + items.reduce(0) { $0 + $1.jsonCapacity } }

    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("items", first: true)
        w.array(items)
        w.key("nextCursor")
        w.optionalString(nextCursor)
        w.key("unread")
        w.int(unread)
        w.key("unreadCapped")
        w.bool(unreadCapped)
        w.raw("}")
    }
}

extension ReplyDecisionResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("reply", first: true)
        reply.write(to: &w)
        w.key("resolvedReports")
        w.int(resolvedReports)
        w.raw("}")
    }
}
