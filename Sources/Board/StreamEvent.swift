import Vocabulary

/// One row of `stream_events` (sql/0024): a change the live board's streams may show (CONTRACT §11).
public struct StreamEvent: Sendable {
    public enum Kind: String, Sendable {
        /// A post's state changed: created, edited, hidden, removed, restored, deleted.
        case post
        /// A reply changed (created, edited, hidden, removed, restored, deleted): `replyID`, on post `postID`.
        case reply
        /// `audience` blocked or unblocked `authorID`.
        case block, unblock
        /// A report on `postID` arrived (the post entered or stays in the queue).
        case report
        /// A moderator decided on `postID` (`action`, `moderatorID`).
        case resolved
    }

    /// A post as a stream's filters and visibility see it, before or after the change.
    public struct Snapshot: Sendable, Equatable {
        public var state: ContentState
        public var weatherType: String
        public var category: String

        public init(state: ContentState, weatherType: String, category: String) {
            self.state = state
            self.weatherType = weatherType
            self.category = category
        }
    }

    public var position: StreamPosition
    public var kind: Kind
    public var postID: Int?
    /// The reply of a `reply` event (and of a `report` or `resolved` event about a reply).
    public var replyID: Int?
    public var authorID: Int?
    public var regionID: Int?
    /// nil: the post did not exist before (a create).
    public var old: Snapshot?
    public var new: Snapshot?
    /// Only this account's streams see the event.
    public var audience: Int?
    public var action: String?
    public var moderatorID: Int?

    public init(
        position: StreamPosition, kind: Kind, postID: Int? = nil, authorID: Int? = nil, regionID: Int? = nil, old: Snapshot? = nil, new: Snapshot? = nil,
        audience: Int? = nil, action: String? = nil, moderatorID: Int? = nil, replyID: Int? = nil
    ) {
        self.replyID = replyID
        self.position = position
        self.kind = kind
        self.postID = postID
        self.authorID = authorID
        self.regionID = regionID
        self.old = old
        self.new = new
        self.audience = audience
        self.action = action
        self.moderatorID = moderatorID
    }
}
