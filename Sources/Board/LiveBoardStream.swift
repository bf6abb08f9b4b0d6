import Vocabulary

/// What one board stream shows (CONTRACT §11, §13): the reader's list with the stream's filters. Who sees an item is
/// `Visibility`'s to say; this adds the filters and the before/after of an event.
public struct LiveBoardStream: Sendable, Hashable {
    /// What an event is to a stream: its item appears (`post`), changes (`update`) or leaves (`remove`).
    public enum Change: String, Sendable, Hashable {
        case post, update, remove
    }

    public var reader: Visibility
    public var weatherType: WeatherType?
    public var category: Category?
    public var regionID: Int?

    public init(reader: Visibility, weatherType: WeatherType? = nil, category: Category? = nil, regionID: Int? = nil) {
        self.reader = reader
        self.weatherType = weatherType
        self.category = category
        self.regionID = regionID
    }

    /// Whether a post in `snapshot` by `authorID` in `regionID` passes the filters and is in the reader's list.
    public func shows(_ snapshot: StreamEvent.Snapshot, authorID: Int, regionID: Int?) -> Bool {
        matches(weatherType: snapshot.weatherType, category: snapshot.category, regionID: regionID)
            && reader.shows(snapshot.state, authorID: authorID, at: .list)
    }

    func matches(weatherType: String, category: String, regionID: Int?) -> Bool {
        if let wanted = self.weatherType, wanted.rawValue != weatherType { return false }
        if let wanted = self.category, wanted.rawValue != category { return false }
        if let wanted = self.regionID, wanted != regionID { return false }
        return true
    }

    /// The change a `post` event makes to this stream, or nil when the stream sees none. `blocked`: the authors the
    /// reader blocks (their posts are in none of the reader's lists).
    public func change(for event: StreamEvent, blocked: Set<Int>) -> Change? {
        guard event.kind == .post, let authorID = event.authorID, !blocked.contains(authorID) else { return nil }
        return Self.change(
            before: event.old.map { shows($0, authorID: authorID, regionID: event.regionID) } ?? false,
            after: event.new.map { shows($0, authorID: authorID, regionID: event.regionID) } ?? false
        )
    }

    /// The change a `reply` event makes to this stream, with its post as it is now: a reply is shown only where the
    /// stream shows its post and the reader sees the post's replies (`Visibility.showsReply`); replies by authors the
    /// reader blocks, and replies on their posts, never.
    public func replyChange(for event: StreamEvent, post: Post?, blocked: Set<Int>) -> Change? {
        guard event.kind == .reply, let authorID = event.authorID, let post, !blocked.contains(authorID), !blocked.contains(post.authorID) else { return nil }
        let postState = Self.state(of: post)
        guard matches(weatherType: post.weatherType.rawValue, category: post.category.rawValue, regionID: post.region.id),
            reader.shows(postState, authorID: post.authorID, at: .list)
        else { return nil }
        func shown(_ reply: StreamEvent.Snapshot?) -> Bool {
            guard let reply else { return false }
            return reader.showsReply(reply.state, authorID: authorID, post: postState, postAuthorID: post.authorID, at: .list)
        }
        return Self.change(before: shown(event.old), after: shown(event.new))
    }

    static func change(before: Bool, after: Bool) -> Change? {
        switch (before, after) {
        case (false, true): .post
        case (true, true): .update
        case (true, false): .remove
        case (false, false): nil
        }
    }

    /// How the reader reads an item by `authorID`: the class its rendering is shared with.
    public func readerClass(author authorID: Int?) -> LiveBoardAudience.Reader {
        switch reader.reader {
        case .anonymous: .anonymous
        case .member(let id): id == authorID ? .author(moderator: false) : .member
        case .moderator(let id): id == authorID ? .author(moderator: true) : .moderator
        // A stream opens for a checked reader (`StreamController`); a token not checked reads as no one's.
        case .session: .anonymous
        }
    }
}

extension LiveBoardStream {
    /// A post's state as the rule reads it.
    static func state(of post: Post) -> ContentState {
        ContentState(status: post.status, hiddenReason: post.hiddenReason, deleted: post.deleted)
    }
}
