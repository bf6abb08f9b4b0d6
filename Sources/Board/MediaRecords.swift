import Database
import Foundation

/// The `media` table (sql/0016_media.sql).
public struct MediaRecords: Sendable {
    let database: PostgresPool

    public init(database: PostgresPool) {
        self.database = database
    }

    static let columns = "m.id, m.owner_id, m.post_id, m.storage_key, m.public, m.width, m.height, m.byte_size, m.blurhash, m.alt, m.created_at, m.retired"

    /// A row with `columns` from position `first` on, decoded by position (a page of posts with two images each
    /// decodes 480 media values).
    static func media(from row: PostgresRow, at first: Int = 0) throws -> Media {
        assert(
            Array(row.columns.names[first..<first + 12])
                == ["id", "owner_id", "post_id", "storage_key", "public", "width", "height", "byte_size", "blurhash", "alt", "created_at", "retired"]
        )
        return Media(
            id: try row.decode(Int.self, at: first),
            ownerID: try row.decode(Int.self, at: first + 1),
            postID: try row.decode(Int?.self, at: first + 2),
            storageKey: try row.decode(String.self, at: first + 3),
            isPublic: try row.decode(Bool.self, at: first + 4),
            width: try row.decode(Int.self, at: first + 5),
            height: try row.decode(Int.self, at: first + 6),
            byteSize: try row.decode(Int.self, at: first + 7),
            blurhash: try row.decode(String.self, at: first + 8),
            alt: try row.decode(String?.self, at: first + 9),
            createdAt: try row.decode(Date.self, at: first + 10),
            isRetired: try row.decode(Bool.self, at: first + 11)
        )
    }

    struct NewMedia: Sendable {
        var ownerID: Int
        var storageKey: String
        var width: Int
        var height: Int
        var byteSize: Int
        var previewByteSize: Int
        var blurhash: String
        var alt: String?
    }

    /// Only while the owner exists (as for posts): an upload that finishes while its account is being deleted
    /// makes nothing, and the caller deletes its files.
    func insert(_ new: NewMedia) async throws -> Media {
        let rows = try await database.query(
            """
            INSERT INTO media AS m (owner_id, storage_key, width, height, byte_size, preview_byte_size, blurhash, alt, alt_search)
            SELECT a.id, \(new.storageKey), \(new.width), \(new.height), \(new.byteSize), \(new.previewByteSize), \(new.blurhash), \(new.alt),
                   \(new.alt.map(SearchTerms.fold))
            FROM (SELECT id FROM accounts WHERE id = \(new.ownerID) AND deleted_at IS NULL FOR KEY SHARE) a
            RETURNING \(raw: Self.columns)
            """
        )
        guard let row = rows.first else { throw BoardError.unauthenticated }
        return try Self.media(from: row)
    }

    func media(id: Int) async throws -> Media? {
        try await database.query("SELECT \(raw: Self.columns) FROM media m WHERE m.id = \(id)").first.map { try Self.media(from: $0) }
    }

    /// Sets the alt text; with `holdingItsPost` (the text holds a blocked term), the visible post it is on is hidden
    /// for review in the same transaction, as a post whose own text matched is. Returns the media and the post held.
    /// `caller` is checked first, in the same transaction (`Caller`), and `check` decides on the media's locked row.
    func setAlt(
        id: Int, alt: String?, holdingItsPost: Bool, by caller: Caller, check: @escaping @Sendable (Media, Identity) throws -> Void
    ) async throws -> (Media, heldPost: Int?)? {
        try await database.transaction { connection in
            let identity = try caller.identity(on: connection)
            guard let current = try connection.query("SELECT \(raw: Self.columns) FROM media m WHERE m.id = \(id) FOR UPDATE").first else { return nil }
            try check(try Self.media(from: current), identity)
            guard let row = try connection.query("UPDATE media AS m SET alt = \(alt), alt_search = \(alt.map(SearchTerms.fold)) WHERE m.id = \(id) RETURNING \(raw: Self.columns)").first else {
                return nil
            }
            let media = try Self.media(from: row)
            guard holdingItsPost, let postID = media.postID else { return (media, nil) }
            let held = try connection.query(
                """
                UPDATE posts SET status = 'hidden', hidden_reason = 'filter'
                WHERE id = \(postID) AND status = 'visible' AND deleted_at IS NULL RETURNING id
                """
            )
            guard !held.isEmpty else { return (media, nil) }
            try PostgresPostStore.queueForFilter(postID: postID, connection: connection)
            return (media, postID)
        }
    }

    func altTexts(_ ids: [Int], ownerID: Int) async throws -> [String] {
        try await database.query(
            "SELECT alt FROM media WHERE id = ANY(\(ids.map(String.init))::int8[]) AND owner_id = \(ownerID) AND alt IS NOT NULL"
        ).map { try $0.decode(String.self, "alt") }
    }

    /// Deletes media `id`, or retires it when a report names it (`inEvidence`), once `check` allows it on its locked
    /// row, in a transaction that checks `caller` first (`Caller`). Returns the storage key of files to delete (none
    /// for retired media, whose files the sync makes private).
    func deleteOrRetire(id: Int, by caller: Caller, check: @escaping @Sendable (Media, Identity) throws -> Void) async throws -> String? {
        try await database.transaction { connection in
            let identity = try caller.identity(on: connection)
            guard let current = try connection.query("SELECT \(raw: Self.columns) FROM media m WHERE m.id = \(id) FOR UPDATE").first else {
                throw BoardError.notFound("media")
            }
            try check(try Self.media(from: current), identity)
            let deleted = try connection.query(
                "DELETE FROM media m WHERE m.id = \(id) AND NOT \(raw: Self.inEvidence) RETURNING m.storage_key"
            )
            if let row = deleted.first { return try row.decode(String.self, "storage_key") }
            try connection.execute("UPDATE media SET post_id = NULL, position = NULL, retired = true, sync_due = true WHERE id = \(id)")
            return nil
        }
    }

    /// Whether a report's snapshot (not yet erased) names this media: then it is evidence and stays.
    static let inEvidence = "EXISTS (SELECT 1 FROM reports r WHERE r.reported_media @> ARRAY[m.id] AND r.reported_body <> '')"

    /// Attaches `ids` (in display order) to `postID` inside the post's transaction: only the owner's media that
    /// is unattached or already on this post. Media on the post but left off the list is only marked here: taken
    /// off and retired, so the sync moves its files to the private side and the purger deletes it (unless a report
    /// names it: then it stays, private, as evidence). Returns the keys of the media taken off.
    @discardableResult
    static func attach(_ ids: [Int], to postID: Int, ownerID: Int, on connection: PostgresConnection) throws -> [String] {
        guard ids.count <= 4, Set(ids).count == ids.count else {
            throw BoardError.invalidField(field: "mediaIds", message: "must be at most 4 distinct media ids")
        }
        let kept = ids.map(String.init)
        let removed = try connection.query(
            """
            UPDATE media SET post_id = NULL, position = NULL, retired = true, sync_due = true
            WHERE post_id = \(postID) AND NOT (id = ANY(\(kept)::int8[]))
            RETURNING storage_key
            """
        ).map { try $0.decode(String.self, "storage_key") }
        // Park the kept ones first so positions can be rewritten in any order.
        try connection.execute("UPDATE media SET position = NULL, post_id = NULL WHERE post_id = \(postID)")
        for (position, id) in ids.enumerated() {
            let attached = try connection.execute(
                """
                UPDATE media SET post_id = \(postID), position = \(position), sync_due = true
                WHERE id = \(id) AND owner_id = \(ownerID) AND post_id IS NULL AND NOT retired
                """
            )
            guard attached == 1 else {
                throw BoardError.invalidField(field: "mediaIds", message: "\(id) is not your media, or is on another post")
            }
        }
        return removed
    }

    /// Account deletion, in its transaction: every media of the account is retired and marked for the sync, which
    /// moves its files to the private side; the purger then deletes what no report names, rows and files. Media a
    /// report names stays on its (reported, so kept) post as evidence; the rest is taken off its post, which may go.
    /// One statement over `media_owner_idx`, however many images the account has: no file is touched here.
    static func retireForDeletedAccount(_ accountID: Int, on connection: PostgresConnection) throws {
        try connection.execute(
            """
            UPDATE media m SET retired = true, sync_due = true,
                post_id = CASE WHEN \(raw: inEvidence) THEN m.post_id END,
                position = CASE WHEN \(raw: inEvidence) THEN m.position END
            WHERE m.owner_id = \(accountID)
            """
        )
    }

    /// How long one sync has a due row to itself, from its claim: no other sync (this instance's or another's)
    /// moves that row's files meanwhile. A sync that dies mid-move leaves the row to the next after this.
    static let syncClaimSeconds = 300

    /// Claims up to `limit` due media not claimed by another sync (rows another transaction holds are skipped), but
    /// none of `excluding` (what this pass already failed to move): (id, key, where its files are, where they should be).
    func claimForSync(
        _ scope: MediaService.SyncScope, limit: Int, excluding: [Int] = []
    ) async throws -> [(id: Int, key: String, isPublic: Bool, shouldBePublic: Bool)] {
        var due: SQLQuery = "SELECT u.id FROM media u WHERE u.sync_due AND (u.sync_claimed_until IS NULL OR u.sync_claimed_until < now())"
        if !excluding.isEmpty { due.append(" AND NOT (u.id = ANY(\(excluding.map(String.init))::int8[]))" as SQLQuery) }
        switch scope {
        case .all: break
        case .post(let postID): due.append(" AND u.post_id = \(postID)" as SQLQuery)
        case .owner(let ownerID): due.append(" AND u.owner_id = \(ownerID)" as SQLQuery)
        case .media(let id): due.append(" AND u.id = \(id)" as SQLQuery)
        }
        due.append(" ORDER BY u.id LIMIT \(limit) FOR UPDATE SKIP LOCKED" as SQLQuery)
        var sql: SQLQuery = "UPDATE media m SET sync_claimed_until = now() + make_interval(secs => \(Self.syncClaimSeconds)::int) FROM ("
        sql.append(due)
        sql.append(
            ") due WHERE m.id = due.id RETURNING m.id, m.storage_key, m.public, \(raw: Self.shouldBePublic) AS should_be_public" as SQLQuery
        )
        return try await database.query(sql).map {
            (try $0.decode(Int.self, "id"), try $0.decode(String.self, "storage_key"), try $0.decode(Bool.self, "public"),
             try $0.decode(Bool.self, "should_be_public"))
        }
    }

    /// Where a media row's files belong: public unless retired or on a post that is not visible.
    static let shouldBePublic = """
        (NOT m.retired AND COALESCE((SELECT p.status = 'visible' AND p.deleted_at IS NULL FROM posts p WHERE p.id = m.post_id), true))
        """

    /// Records where the files now are and ends the claim; a change made meanwhile keeps the row due.
    func synced(id: Int, isPublic: Bool) async throws {
        try await database.execute(
            """
            UPDATE media m SET public = \(isPublic), sync_due = (\(raw: Self.shouldBePublic) <> \(isPublic)), sync_claimed_until = NULL
            WHERE m.id = \(id)
            """
        )
    }

    /// After a failed move: the row stays due and unclaimed, for the next pass.
    func release(id: Int) async throws {
        try await database.execute("UPDATE media SET sync_claimed_until = NULL WHERE id = \(id)")
    }

    /// The purger's statement for unattached media older than `hours`, at most `limit`: deleted, keys returned for
    /// their files. Media attached while the batch waited on its row is re-checked and kept.
    static func purgeUnattached(olderThanHours hours: Int, limit: Int) -> SQLQuery {
        """
        DELETE FROM media m WHERE m.id IN (
            SELECT u.id FROM media u
            WHERE u.post_id IS NULL AND NOT u.retired AND u.created_at < now() - make_interval(hours => \(hours)::int) LIMIT \(limit))
          AND m.post_id IS NULL AND NOT m.retired
        RETURNING m.storage_key
        """
    }

    /// The purger's statement for retired media no report's snapshot names (never did, or the evidence was
    /// erased): deleted, keys returned for their files. Only once the sync has settled them (not due, so not
    /// claimed): a sync never moves a file the purger is deleting, which could leave a copy behind.
    static func purgeRetired(limit: Int) -> SQLQuery {
        """
        DELETE FROM media m WHERE m.id IN (
            SELECT m.id FROM media m WHERE m.retired AND NOT m.sync_due AND NOT \(raw: Self.inEvidence) LIMIT \(limit))
          AND m.retired AND NOT m.sync_due AND NOT \(raw: Self.inEvidence)
        RETURNING m.storage_key
        """
    }

    /// The media ids a report keeps as evidence (in a statement over `posts`): the post's media in display order.
    static let snapshot = "(SELECT coalesce(array_agg(m.id ORDER BY m.position), '{}') FROM media m WHERE m.post_id = posts.id)"
}
