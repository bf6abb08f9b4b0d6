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
    /// Its post's state: a reply is shown only where its post behaves as visible (`Visibility.showsReplies`).
    public var postState: ContentState

    public init(
        id: Int, postID: Int, postAuthorID: Int, authorID: Int, authorDisplayName: String, body: String, status: PostStatus,
        hiddenReason: String? = nil, deleted: Bool = false, createdAt: Date, updatedAt: Date, edited: Bool = false, version: Int = 1,
        postTitle: String? = nil, postState: ContentState = .visible
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
        self.postState = postState
    }

    /// The reply's own state as `Visibility` reads it.
    public var state: ContentState { ContentState(status: status, hiddenReason: hiddenReason, deleted: deleted) }

    /// Whether `viewer` may see this reply read by its id (`Visibility.showsReply`).
    public func isShown(to viewer: Viewer) -> Bool {
        Visibility(viewer).showsReply(state, authorID: authorID, post: postState, postAuthorID: postAuthorID)
    }

    /// `status` as `viewer` is shown it (`Visibility.status`).
    public func status(shownTo viewer: Viewer) -> PostStatus? {
        Visibility(viewer).status(state, authorID: authorID)
    }
}
