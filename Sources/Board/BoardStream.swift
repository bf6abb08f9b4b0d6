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
