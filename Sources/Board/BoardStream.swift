import Vocabulary

/// What one board stream shows (CONTRACT §11): the caller's list with the stream's filters. `change(for:)` decides, for
/// one post event, whether this stream sees the post appear (`post`), change (`update`) or leave (`remove`), by asking
/// whether the list showed the post before the change and whether it shows it after.
public struct BoardStream: Sendable {
    public enum Change: String, Sendable {
        case post, update, remove
    }

    public var viewer: Viewer
    public var weatherType: WeatherType?
    public var category: Category?
    public var regionID: Int?

    public init(viewer: Viewer, weatherType: WeatherType? = nil, category: Category? = nil, regionID: Int? = nil) {
        self.viewer = viewer
        self.weatherType = weatherType
        self.category = category
        self.regionID = regionID
    }

    /// The change `event` (a `post` event) makes to this stream, or nil when the stream does not see it. `blocked`:
    /// the authors the viewer blocks (their posts are in none of the viewer's lists).
    public func change(for event: StreamEvent, blocked: Set<Int>) -> Change? {
        guard event.kind == .post, let authorID = event.authorID, !blocked.contains(authorID) else { return nil }
        let before = event.old.map { shows($0, authorID: authorID, regionID: event.regionID) } ?? false
        let after = event.new.map { shows($0, authorID: authorID, regionID: event.regionID) } ?? false
        switch (before, after) {
        case (false, true): return .post
        case (true, true): return .update
        case (true, false): return .remove
        case (false, false): return nil
        }
    }

    /// Whether this stream's list shows a post in `snapshot`: the filters, then the list's visibility (everyone the
    /// visible posts; an author also their own hidden and removed ones, and the ones the term filter holds, which look
    /// visible to them; a moderator every status but deleted).
    /// What a `reply` event is to this stream (CONTRACT §13): a reply is shown with its post, so only where the post
    /// (as it is now, `post`) is in this stream and, but for moderators, shown to everyone; then from the reply's state
    /// before and after, as for posts: `post` when it appears, `update` when it changes, `remove` when it leaves.
    /// Replies by authors the reader blocks, and replies on their posts, are never shown.
    public func replyChange(for event: StreamEvent, post: Post?, blocked: Set<Int>) -> Change? {
        guard event.kind == .reply, let authorID = event.authorID, let post, !blocked.contains(authorID), !blocked.contains(post.authorID) else { return nil }
        let snapshot = StreamEvent.Snapshot(state: post.streamState, weatherType: post.weatherType.rawValue, category: post.category.rawValue)
        guard shows(snapshot, authorID: post.authorID, regionID: post.region.id), viewer.isModerator || snapshot.state == .visible else { return nil }
        func replyShown(_ reply: StreamEvent.Snapshot?) -> Bool {
            switch reply?.state {
            case .visible?: true
            case .deleted?, nil: false
            case .filtered?, .hidden?, .removed?: viewer.isModerator || viewer.accountID == authorID
            }
        }
        switch (replyShown(event.old), replyShown(event.new)) {
        case (false, true): return .post
        case (true, true): return .update
        case (true, false): return .remove
        case (false, false): return nil
        }
    }

    public func shows(_ snapshot: StreamEvent.Snapshot, authorID: Int, regionID: Int?) -> Bool {
        if let weatherType, weatherType.rawValue != snapshot.weatherType { return false }
        if let category, category.rawValue != snapshot.category { return false }
        if let wanted = self.regionID, wanted != regionID { return false }
        switch snapshot.state {
        case .visible: return true
        case .deleted: return false
        case .filtered, .hidden, .removed: return viewer.isModerator || viewer.accountID == authorID
        }
    }
}

extension Post {
    /// The post's state as the live board's events name it (sql/0024's `stream_post_state`).
    var streamState: StreamPostState {
        if deleted { return .deleted }
        switch status {
        case .visible: return .visible
        case .hidden: return hiddenReason == "filter" ? .filtered : .hidden
        case .removed: return .removed
        case .deleted: return .deleted
        }
    }
}
