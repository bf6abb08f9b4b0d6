import Database
import Foundation

/// The live board's events in PostgreSQL (sql/0024, CONTRACT §11), and what a stream reads with them: the posts, the
/// queue items, the helpful marks and blocks of its subscribers. Every read goes to the primary, the one place the
/// events are written.
public struct PostgresStreamStore: Sendable {
    let database: PostgresPool

    public init(database: PostgresPool) {
        self.database = database
    }

    /// One read of the events after a position: the ones every stream may now be sent, and the new horizon.
    public struct Batch: Sendable {
        /// Events below the horizon, in order: final (no transaction that could still add one below them is running).
        public var events: [StreamEvent]
        /// The position a reader has read through once it has sent `events` (the last event's, or the horizon's when
        /// fewer than the limit came back).
        public var through: StreamPosition
        /// Committed events above the horizon wait for an older transaction to end (one that may yet write events
        /// below them): read again soon, even without a notification.
        public var heldBack: Bool
    }

    /// The events after `position`, at most `limit`. The horizon, `pg_snapshot_xmin` of the statement's own snapshot,
    /// is the oldest transaction still running: every event with a smaller xid has committed (and is visible to this
    /// statement) or never will. Events at or above it are not returned yet; they are what `heldBack` reports.
    public func events(after position: StreamPosition, limit: Int = 500) async throws -> Batch {
        let rows = try await database.query(
            """
            SELECT h.horizon, e.* FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon) h
            LEFT JOIN LATERAL (
                SELECT xid, seq, kind, post_id, author_id, region_id, old_state, old_weather, old_category, new_state, new_weather, new_category,
                       audience, action, moderator_id
                FROM stream_events WHERE (xid, seq) > (\(position.xid), \(position.seq)) ORDER BY xid, seq LIMIT \(limit)
            ) e ON true
            """
        )
        let horizon = try rows[0].decode(Int64.self, "horizon")
        var events: [StreamEvent] = []
        var heldBack = false
        for row in rows {
            guard let xid = try row.decode(Int64?.self, "xid") else { break }
            guard xid < horizon else {
                heldBack = true
                break
            }
            events.append(try Self.event(from: row))
        }
        var through = events.last?.position ?? position
        if events.count < limit || heldBack {
            through = max(through, StreamPosition(xid: horizon, seq: 0))
        }
        return Batch(events: events, through: through, heldBack: heldBack)
    }

    /// The events in (`after`, `through`], in order (a resuming client's catch-up), at most `limit`; all final, as
    /// `through` was a reader's position.
    public func events(after: StreamPosition, through: StreamPosition, limit: Int = 500) async throws -> [StreamEvent] {
        try await database.query(
            """
            SELECT xid, seq, kind, post_id, author_id, region_id, old_state, old_weather, old_category, new_state, new_weather, new_category,
                   audience, action, moderator_id
            FROM stream_events WHERE (xid, seq) > (\(after.xid), \(after.seq)) AND (xid, seq) <= (\(through.xid), \(through.seq))
            ORDER BY xid, seq LIMIT \(limit)
            """
        ).map(Self.event(from:))
    }

    /// Whether a client may resume after `position` without having missed anything: no event after it has been
    /// trimmed (`stream_trim`), an event position names an event that exists, and a horizon is not in the future.
    public func canResume(after position: StreamPosition) async throws -> Bool {
        let rows = try await database.query(
            """
            SELECT (\(position.xid), \(position.seq)) >= (t.xid, t.seq) AS kept,
                   CASE WHEN \(position.seq) > 0 THEN EXISTS (SELECT 1 FROM stream_events e WHERE e.xid = \(position.xid) AND e.seq = \(position.seq))
                        ELSE \(position.xid) <= pg_snapshot_xmin(pg_current_snapshot())::text::bigint END AS known
            FROM stream_trim t
            """
        )
        guard let row = rows.first else { return false }
        return try row.decode(Bool.self, "kept") && row.decode(Bool.self, "known")
    }

    /// The current horizon as a position (where a reader starting now begins).
    public func horizon() async throws -> StreamPosition {
        StreamPosition(xid: try await database.query("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon")[0].decode(Int64.self, "horizon"), seq: 0)
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
    /// of the blocker's streams.
    public func postsOf(author: Int, limit: Int) async throws -> [(id: Int, regionID: Int, snapshot: StreamEvent.Snapshot)] {
        try await database.query(
            """
            SELECT id, region_id, stream_post_state(status, hidden_reason, deleted_at) AS state, weather_type, category FROM posts
            WHERE author_id = \(author) AND deleted_at IS NULL ORDER BY author_id, id DESC LIMIT \(limit)
            """
        ).map { row in
            (
                try row.decode(Int.self, "id"), try row.decode(Int.self, "region_id"),
                StreamEvent.Snapshot(
                    state: StreamPostState(rawValue: try row.decode(String.self, "state")) ?? .hidden, weatherType: try row.decode(String.self, "weather_type"),
                    category: try row.decode(String.self, "category")
                )
            )
        }
    }

    /// Deletes events older than `seconds`, at most `limit`, and raises `stream_trim` to the highest position deleted,
    /// so a client resuming from below it is told to reload (`reset`). The purger runs it until it deletes fewer.
    public static func trim(olderThanSeconds seconds: Int, limit: Int) -> SQLQuery {
        """
        WITH gone AS (
            SELECT xid, seq FROM stream_events WHERE created_at < now() - make_interval(secs => \(seconds)) ORDER BY created_at LIMIT \(limit)
        ), raised AS (
            UPDATE stream_trim t SET xid = top.xid, seq = top.seq
            FROM (SELECT xid, seq FROM gone ORDER BY xid DESC, seq DESC LIMIT 1) top WHERE (top.xid, top.seq) > (t.xid, t.seq)
            RETURNING 1
        )
        DELETE FROM stream_events WHERE (xid, seq) IN (SELECT xid, seq FROM gone)
        """
    }

    static func event(from row: PostgresRow) throws -> StreamEvent {
        func snapshot(_ prefix: String) throws -> StreamEvent.Snapshot? {
            guard let state = try row.decode(String?.self, prefix + "_state").flatMap(StreamPostState.init(rawValue:)) else { return nil }
            return StreamEvent.Snapshot(
                state: state, weatherType: try row.decode(String?.self, prefix + "_weather") ?? "", category: try row.decode(String?.self, prefix + "_category") ?? ""
            )
        }
        return StreamEvent(
            position: StreamPosition(xid: try row.decode(Int64.self, "xid"), seq: try row.decode(Int64.self, "seq")),
            kind: try UnknownStoredValue.decode(StreamEvent.Kind.self, row.decode(String.self, "kind"), column: "stream_events.kind"),
            postID: try row.decode(Int?.self, "post_id"),
            authorID: try row.decode(Int?.self, "author_id"),
            regionID: try row.decode(Int?.self, "region_id"),
            old: try snapshot("old"),
            new: try snapshot("new"),
            audience: try row.decode(Int?.self, "audience"),
            action: try row.decode(String?.self, "action"),
            moderatorID: try row.decode(Int?.self, "moderator_id")
        )
    }
}
