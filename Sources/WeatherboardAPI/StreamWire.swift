/// The data of a live board `remove` event (CONTRACT §11): the post that left the caller's list.
public struct StreamRemovedEvent: Decodable, Sendable {
    public var id: String

    public init(id: String) {
        self.id = id
    }
}

/// The data of a live board `replyRemoved` event (CONTRACT §13): the reply that left the caller's view.
public struct StreamReplyRemovedEvent: Decodable, Sendable {
    public var id: String
    public var postId: String

    public init(id: String, postId: String) {
        self.id = id
        self.postId = postId
    }
}

extension StreamReplyRemovedEvent: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("id", first: true)
        w.string(id)
        w.key("postId")
        w.string(postId)
        w.raw("}")
    }
}

/// The data of a moderation stream `resolved` event (CONTRACT §11).
public struct QueueResolvedEvent: Decodable, Sendable {
    /// The post decided on, or the post of the reply decided on.
    public var postId: String
    /// The reply decided on (CONTRACT §13); absent for a post.
    public var replyId: String?
    public var action: String
    /// nil for a decision taken outside the moderator API.
    public var moderatorId: String?

    public init(postId: String, replyId: String? = nil, action: String, moderatorId: String?) {
        self.replyId = replyId
        self.postId = postId
        self.action = action
        self.moderatorId = moderatorId
    }
}

extension StreamRemovedEvent: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("id", first: true)
        w.string(id)
        w.raw("}")
    }
}

extension QueueResolvedEvent: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("action", first: true)
        w.string(action)
        w.key("moderatorId")
        w.optionalString(moderatorId)
        w.key("postId")
        w.string(postId)
        if let replyId {
            w.key("replyId")
            w.string(replyId)
        }
        w.raw("}")
    }
}
