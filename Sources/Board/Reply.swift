import Foundation

/// An answer to a post (CONTRACT §13).
public struct Reply: Sendable, Equatable {
    public var id: Int
    public var postID: Int
    /// The author of the post it answers (`isPostAuthor`, the inbox).
    public var postAuthorID: Int
    public var authorID: Int
    public var authorDisplayName: String
    public var body: String
    public var status: PostStatus
    /// Why a hidden reply is hidden: `reports` or `filter` (held by the term filter).
    public var hiddenReason: String?
    public var deleted: Bool
    public var createdAt: Date
    public var updatedAt: Date
    public var edited: Bool
    /// 1 when created, one more with every edit: the reply's ETag.
    public var version: Int
    /// Its post's title (the inbox shows it).
    public var postTitle: String?
    /// Whether its post is shown to everyone (visible, not deleted): a reply is shown only while its post is.
    public var postPublic: Bool

    public init(
        id: Int, postID: Int, postAuthorID: Int, authorID: Int, authorDisplayName: String, body: String, status: PostStatus,
        hiddenReason: String? = nil, deleted: Bool = false, createdAt: Date, updatedAt: Date, edited: Bool = false, version: Int = 1,
        postTitle: String? = nil, postPublic: Bool = true
    ) {
        self.id = id
        self.postID = postID
        self.postAuthorID = postAuthorID
        self.authorID = authorID
        self.authorDisplayName = authorDisplayName
        self.body = body
        self.status = status
        self.hiddenReason = hiddenReason
        self.deleted = deleted
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.edited = edited
        self.version = version
        self.postTitle = postTitle
        self.postPublic = postPublic
    }

    /// Whether `viewer` may see this reply: moderators always; everyone else only while its post is shown to everyone
    /// and the reply is not deleted, and then a reply that is not visible only to its author.
    public func isShown(to viewer: Viewer) -> Bool {
        if viewer.isModerator { return true }
        guard postPublic, !deleted else { return false }
        return status == .visible || authorID == viewer.accountID
    }

    /// `status` as `viewer` is shown it (as for posts): moderators see every state, the author its own (a reply held by
    /// the term filter looks visible to its author), anyone else nothing.
    public func status(shownTo viewer: Viewer) -> PostStatus? {
        if viewer.isModerator { return deleted ? .deleted : status }
        guard viewer.accountID == authorID else { return nil }
        return status == .hidden && hiddenReason == "filter" ? .visible : status
    }
}
