import Database
import Foundation

/// The live board's events in PostgreSQL (sql/0024, CONTRACT §11), and what a stream reads with them: the posts, the
/// queue items, the helpful marks and blocks of its subscribers. Every read goes to the primary, the one place the
/// events are written.
public struct PostgresStreamStore: LiveBoardStore {
    let database: PostgresPool

    public init(database: PostgresPool) {
        self.database = database
    }

    static let columns = """
        id, kind, post_id, author_id, region_id, old_state, old_weather, old_category, new_state, new_weather, new_category, audience, action, moderator_id, reply_id
        """

    /// The events after `position`, in order, at most `limit`. Ids are given in commit order (sql/0024), so these are
    /// final: no event can still appear below the last one.
    public func events(after position: StreamPosition, limit: Int = 500) async throws -> [StreamEvent] {
        try await database.query(
            "SELECT \(raw: Self.columns) FROM stream_events WHERE id > \(position.id) ORDER BY id LIMIT \(limit)"
        ).map(Self.event(from:))
    }

    /// The events in (`after`, `through`], in order (a resuming client's catch-up), at most `limit`.
    public func events(after: StreamPosition, through: StreamPosition, limit: Int = 500) async throws -> [StreamEvent] {
        try await database.query(
            "SELECT \(raw: Self.columns) FROM stream_events WHERE id > \(after.id) AND id <= \(through.id) ORDER BY id LIMIT \(limit)"
        ).map(Self.event(from:))
    }

    /// Whether a client may resume after `position` without having missed anything: nothing after it has been trimmed
    /// (`stream_trim`), and it is not beyond the last event (a forged id).
    public func canResume(after position: StreamPosition) async throws -> Bool {
        let rows = try await database.query(
            """
            SELECT \(position.id) >= t.id AND \(position.id) <= (SELECT coalesce(max(id), 0) FROM stream_events) AS ok FROM stream_trim t
            """
        )
        return try rows.first?.decode(Bool.self, "ok") ?? false
    }

    /// The last event committed (where a reader starting now begins).
    public func latest() async throws -> StreamPosition {
        StreamPosition(try await database.query("SELECT coalesce(max(id), (SELECT id FROM stream_trim)) AS id FROM stream_events")[0].decode(Int64.self, "id"))
    }

    /// The posts of `ids` as they are now, with their images, whatever their status (each stream decides what it may
    /// see from the event, not from this read); `helpedByMe` false.
    public func posts(ids: [Int]) async throws -> [Int: Post] {
        guard !ids.isEmpty else { return [:] }
        let posts = try PostgresPostStore.posts(
            await database.query(PostgresPostStore.withMedia("\(raw: PostgresPostStore.select) WHERE p.id = ANY(\(ids.map(String.init))::int8[])"))
        )
        return Dictionary(posts.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The replies of `ids` as they are now, whatever their state (each stream decides from the event).
    public func replies(ids: [Int]) async throws -> [Int: Reply] {
        guard !ids.isEmpty else { return [:] }
        let replies = try PostgresReplyStore.replies(
            await database.query("\(raw: PostgresReplyStore.select) WHERE r.id = ANY(\(ids.map(String.init))::int8[])")
        )
        return Dictionary(replies.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The queue items of these posts and replies, as the moderation queue shows them.
    public func queueItems(postIDs: [Int], replyIDs: [Int]) async throws -> [QueueItem] {
        try await PostgresModerationStore(database: database).queueItems(postIDs: postIDs, replyIDs: replyIDs)
    }

    /// Which of `accounts` marked post `postID` helpful (one read for every subscriber an event goes to).
    public func helpfulMarks(postID: Int, accounts: [Int]) async throws -> Set<Int> {
        guard !accounts.isEmpty else { return [] }
        let rows = try await database.query(
            "SELECT account_id FROM helpful_marks WHERE post_id = \(postID) AND account_id = ANY(\(accounts.map(String.init))::int8[])"
        )
        return Set(try rows.map { try $0.decode(Int.self, "account_id") })
    }

    /// The authors `accountID` blocks.
    public func blockedAuthors(of accountID: Int) async throws -> Set<Int> {
        Set(try await database.query("SELECT blocked_id FROM blocks WHERE blocker_id = \(accountID)").map { try $0.decode(Int.self, "blocked_id") })
    }

    /// An author's posts that some list may show (not deleted), newest first, at most `limit`: what a block takes out
    /// of the blocker's streams. A range, not `=`: the generic plan of `author_id = $1` walked the primary key backwards
    /// through every post (1M rows for an author with a few), this one `posts_author_idx`.
    public func postsOf(author: Int, limit: Int) async throws -> [(id: Int, regionID: Int, snapshot: StreamEvent.Snapshot)] {
        try await database.query(
            """
            SELECT id, region_id, stream_post_state(status, hidden_reason, deleted_at) AS state, weather_type, category FROM posts
            WHERE author_id >= \(author) AND author_id <= \(author) AND deleted_at IS NULL ORDER BY author_id, id DESC LIMIT \(limit)
            """
        ).map { row in
            (
                try row.decode(Int.self, "id"), try row.decode(Int.self, "region_id"),
                StreamEvent.Snapshot(
                    state: ContentState(rawValue: try row.decode(String.self, "state")) ?? .hidden, weatherType: try row.decode(String.self, "weather_type"),
                    category: try row.decode(String.self, "category")
                )
            )
        }
    }

    /// Deletes events older than `seconds`, at most `limit`, oldest first, and raises `stream_trim` to the highest id
    /// deleted, so a client resuming from below it is told to reload (`reset`). The purger runs it until it deletes fewer.
    public static func trim(olderThanSeconds seconds: Int, limit: Int) -> SQLQuery {
        """
        WITH gone AS (
            SELECT id FROM stream_events WHERE created_at < now() - make_interval(secs => \(seconds)) ORDER BY id LIMIT \(limit)
        ), raised AS (
            UPDATE stream_trim t SET id = top.id FROM (SELECT max(id) AS id FROM gone) top WHERE top.id > t.id RETURNING 1
        )
        DELETE FROM stream_events WHERE id IN (SELECT id FROM gone)
        """
    }

    static func event(from row: PostgresRow) throws -> StreamEvent {
        func snapshot(_ prefix: String) throws -> StreamEvent.Snapshot? {
            guard let state = try row.decode(String?.self, prefix + "_state").flatMap(ContentState.init(rawValue:)) else { return nil }
            return StreamEvent.Snapshot(
                state: state, weatherType: try row.decode(String?.self, prefix + "_weather") ?? "", category: try row.decode(String?.self, prefix + "_category") ?? ""
            )
        }
        return StreamEvent(
            position: StreamPosition(try row.decode(Int64.self, "id")),
            kind: try UnknownStoredValue.decode(StreamEvent.Kind.self, row.decode(String.self, "kind"), column: "stream_events.kind"),
            postID: try row.decode(Int?.self, "post_id"),
            authorID: try row.decode(Int?.self, "author_id"),
            regionID: try row.decode(Int?.self, "region_id"),
            old: try snapshot("old"),
            new: try snapshot("new"),
            audience: try row.decode(Int?.self, "audience"),
            action: try row.decode(String?.self, "action"),
            moderatorID: try row.decode(Int?.self, "moderator_id"),
            replyID: try row.decode(Int?.self, "reply_id")
        )
    }
}
