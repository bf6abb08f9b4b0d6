import Database
import Foundation

/// The `media` table (sql/0016_media.sql).
public struct MediaRecords: Sendable {
    let database: PostgresPool

    public init(database: PostgresPool) {
        self.database = database
    }

    static let columns = "m.id, m.owner_id, m.post_id, m.storage_key, m.public, m.width, m.height, m.byte_size, m.blurhash, m.alt, m.created_at, m.retired"

    static func media(from row: PostgresRow) throws -> Media {
        Media(
            id: try row.decode(Int.self, "id"),
            ownerID: try row.decode(Int.self, "owner_id"),
            postID: try row.decode(Int?.self, "post_id"),
            storageKey: try row.decode(String.self, "storage_key"),
            isPublic: try row.decode(Bool.self, "public"),
            width: try row.decode(Int.self, "width"),
            height: try row.decode(Int.self, "height"),
            byteSize: try row.decode(Int.self, "byte_size"),
            blurhash: try row.decode(String.self, "blurhash"),
            alt: try row.decode(String?.self, "alt"),
            createdAt: try row.decode(Date.self, "created_at"),
            isRetired: try row.decode(Bool.self, "retired")
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

    func insert(_ new: NewMedia) async throws -> Media {
        let rows = try await database.query(
            """
            INSERT INTO media AS m (owner_id, storage_key, width, height, byte_size, preview_byte_size, blurhash, alt)
            VALUES (\(new.ownerID), \(new.storageKey), \(new.width), \(new.height), \(new.byteSize), \(new.previewByteSize), \(new.blurhash), \(new.alt))
            RETURNING \(raw: Self.columns)
            """
        )
        return try Self.media(from: rows[0])
    }

    func media(id: Int) async throws -> Media? {
        try await database.query("SELECT \(raw: Self.columns) FROM media m WHERE m.id = \(id)").first.map(Self.media(from:))
    }

    /// Media of these posts, in display order, keyed by post id (the moderation queue).
    func media(posts ids: [Int]) async throws -> [Int: [Media]] {
        guard !ids.isEmpty else { return [:] }
        var byPost: [Int: [Media]] = [:]
        for row in try await database.query(
            "SELECT \(raw: Self.columns) FROM media m WHERE m.post_id = ANY(\(ids.map(String.init))::int8[]) ORDER BY m.post_id, m.position"
        ) {
            let media = try Self.media(from: row)
            if let postID = media.postID { byPost[postID, default: []].append(media) }
        }
        return byPost
    }

    func setAlt(id: Int, alt: String?) async throws -> Media? {
        try await database.query("UPDATE media AS m SET alt = \(alt) WHERE m.id = \(id) RETURNING \(raw: Self.columns)").first.map(Self.media(from:))
    }

    /// Deletes the row and returns its key (its files are the caller's to delete) or, when a report names it,
    /// retires it (off its post, private, kept as evidence) and returns nil.
    func deleteOrRetire(id: Int) async throws -> String? {
        try await database.transaction { connection in
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
    /// is unattached or already on this post. Media on the post but left off the list is deleted (or, when a
    /// report names it, retired: kept private as evidence); the deleted keys are returned so the caller
    /// deletes their files once the transaction has committed.
    static func attach(_ ids: [Int], to postID: Int, ownerID: Int, on connection: PostgresConnection) throws -> [String] {
        guard ids.count <= 4, Set(ids).count == ids.count else {
            throw BoardError.invalidField(field: "mediaIds", message: "must be at most 4 distinct media ids")
        }
        let kept = ids.map(String.init)
        let removed = try connection.query(
            """
            DELETE FROM media m WHERE m.post_id = \(postID) AND NOT (m.id = ANY(\(kept)::int8[])) AND NOT \(raw: inEvidence)
            RETURNING m.storage_key
            """
        ).map { try $0.decode(String.self, "storage_key") }
        try connection.execute(
            """
            UPDATE media SET post_id = NULL, position = NULL, retired = true, sync_due = true
            WHERE post_id = \(postID) AND NOT (id = ANY(\(kept)::int8[]))
            """
        )
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

    /// Account deletion: the account's media that no report names is deleted (keys returned for the files);
    /// the rest is retired, private, as evidence.
    static func removeForDeletedAccount(_ accountID: Int, on connection: PostgresConnection) throws -> [String] {
        let removed = try connection.query(
            "DELETE FROM media m WHERE m.owner_id = \(accountID) AND NOT \(raw: inEvidence) RETURNING m.storage_key"
        ).map { try $0.decode(String.self, "storage_key") }
        try connection.execute("UPDATE media SET retired = true, sync_due = true WHERE owner_id = \(accountID)")
        return removed
    }

    /// Media whose files may be on the wrong side: (id, key, where they should be).
    func dueForSync(_ scope: MediaService.SyncScope, limit: Int) async throws -> [(id: Int, key: String, isPublic: Bool, shouldBePublic: Bool)] {
        var sql: SQLQuery = "SELECT m.id, m.storage_key, m.public, \(raw: Self.shouldBePublic) AS should_be_public FROM media m WHERE m.sync_due"
        switch scope {
        case .all: break
        case .post(let postID): sql.append(" AND m.post_id = \(postID)" as SQLQuery)
        case .owner(let ownerID): sql.append(" AND m.owner_id = \(ownerID)" as SQLQuery)
        case .media(let id): sql.append(" AND m.id = \(id)" as SQLQuery)
        }
        sql.append(" ORDER BY m.id LIMIT \(limit)" as SQLQuery)
        return try await database.query(sql).map {
            (try $0.decode(Int.self, "id"), try $0.decode(String.self, "storage_key"), try $0.decode(Bool.self, "public"),
             try $0.decode(Bool.self, "should_be_public"))
        }
    }

    /// Where a media row's files belong: public unless retired or on a post that is not visible.
    static let shouldBePublic = """
        (NOT m.retired AND COALESCE((SELECT p.status = 'visible' AND p.deleted_at IS NULL FROM posts p WHERE p.id = m.post_id), true))
        """

    /// Records where the files now are; a change made meanwhile keeps the row due.
    func synced(id: Int, isPublic: Bool) async throws {
        try await database.execute(
            "UPDATE media m SET public = \(isPublic), sync_due = (\(raw: Self.shouldBePublic) <> \(isPublic)) WHERE m.id = \(id)"
        )
    }

    /// Unattached media older than `hours`, at most `limit`: deleted, keys returned for their files.
    func purgeUnattached(olderThanHours hours: Int, limit: Int) async throws -> [String] {
        try await database.query(
            """
            DELETE FROM media WHERE id IN (
                SELECT m.id FROM media m
                WHERE m.post_id IS NULL AND NOT m.retired AND m.created_at < now() - make_interval(hours => \(hours)::int) LIMIT \(limit))
            RETURNING storage_key
            """
        ).map { try $0.decode(String.self, "storage_key") }
    }

    /// Retired media no report's snapshot names any more (the evidence was erased), at most `limit`.
    func purgeRetired(limit: Int) async throws -> [String] {
        try await database.query(
            """
            DELETE FROM media WHERE id IN (
                SELECT m.id FROM media m WHERE m.retired AND NOT \(raw: Self.inEvidence) LIMIT \(limit))
            RETURNING storage_key
            """
        ).map { try $0.decode(String.self, "storage_key") }
    }

    /// The media ids a report keeps as evidence (in a statement over `posts`): the post's media in display order.
    static let snapshot = "(SELECT coalesce(array_agg(m.id ORDER BY m.position), '{}') FROM media m WHERE m.post_id = posts.id)"

    /// A post's media as one JSON value in the post's own row (so a page of posts with their media is still
    /// one statement): `[[id, key, public, width, height, byte_size, blurhash, alt, created µs, owner, retired], …]`
    /// in display order, or NULL for none.
    static let perPost = """
        (SELECT json_agg(json_build_array(m.id, m.storage_key, m.public, m.width, m.height, m.byte_size, m.blurhash, m.alt,
                                          (extract(epoch FROM m.created_at) * 1000000)::int8, m.owner_id, m.retired) ORDER BY m.position)
         FROM media m WHERE m.post_id = p.id)
        """

    /// Reads `perPost`. The JSON comes from our own query, but it is still checked value by value: a malformed
    /// element is an error (a logged 500), never a trap and never a silent default.
    static func decodePerPost(_ json: String?) throws -> [Media] {
        guard let json else { return [] }
        guard let items = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[Any]] else {
            throw MediaDecodingError(json)
        }
        func int(_ value: Any) -> Int? {
            switch value {
            case let v as Int: return v
            case let v as Int64: return Int(exactly: v)
            case let v as Double: return Int(exactly: v)
            case let v as NSNumber: return Int(exactly: v.int64Value)
            default: return nil
            }
        }
        func bool(_ value: Any) -> Bool? {
            switch value {
            case let v as Bool: return v
            case let v as NSNumber: return v.boolValue
            default: return nil
            }
        }
        return try items.map { item in
            guard item.count == 11, let id = int(item[0]), let key = item[1] as? String, let isPublic = bool(item[2]),
                let width = int(item[3]), let height = int(item[4]), let byteSize = int(item[5]), let blurhash = item[6] as? String,
                let micros = int(item[8]), let owner = int(item[9]), let retired = bool(item[10])
            else { throw MediaDecodingError(json) }
            return Media(
                id: id, ownerID: owner, postID: nil, storageKey: key, isPublic: isPublic, width: width, height: height, byteSize: byteSize,
                blurhash: blurhash, alt: item[7] as? String, createdAt: Date(timeIntervalSince1970: Double(micros) / 1_000_000), isRetired: retired
            )
        }
    }
}

/// A post row's media column did not have the shape `MediaRecords.perPost` writes.
struct MediaDecodingError: Error, CustomStringConvertible {
    let json: String
    init(_ json: String) { self.json = String(json.prefix(200)) }
    var description: String { "unexpected media JSON in a post row: \(json)" }
}
