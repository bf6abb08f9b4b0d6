import Database
import Foundation
import Vocabulary

/// Posts in PostgreSQL. Lists are keyset pages over partial indexes (see sql/0004_posts.sql).
public struct PostgresPostStore: PostStore {
    let database: PostgresPool
    /// Standbys for the reads that may be served by one (`list`, `read`; CONTRACT §12); nil: everything on `database`.
    let reads: ReplicaRouter?

    public init(database: PostgresPool, reads: ReplicaRouter? = nil) {
        self.database = database
        self.reads = reads
    }

    /// Runs `body` with a store on the pool `viewer`'s reads go to (`ReplicaRouter`), or on this one; `body` gets the
    /// reader. With standbys a token still to be checked is checked first, on the primary (`SessionGate.checked`);
    /// without, `body` checks it inside its read (`SessionGate.read`).
    func routed<T: Sendable>(_ viewer: Viewer, _ body: (PostgresPostStore, Viewer) async throws -> T) async throws -> T {
        guard let reads else { return try await body(self, viewer) }
        let viewer = try await SessionGate.checked(viewer)
        return try await reads.read(viewer.reads) { pool in try await body(PostgresPostStore(database: pool), viewer) }
    }

    /// A post with its author's name and its region. The author is a LATERAL lookup behind `OFFSET 0`, which the
    /// planner can neither flatten nor start from: as a plain join, a generic plan of an author's list on a board of
    /// few accounts walked `accounts` and gathered all of the author's posts to sort them (100,000 for "my posts" of a
    /// prolific author: `ScalePlanTests` on a fresh database), as the inbox once did (`PostgresReplyStore.select`).
    static let select: String = """
        SELECT p.id, p.author_id, a.display_name AS author_name, p.region_id, r.name_en, r.name_ko, r.country_code,
               p.weather_type, p.category, p.title, p.body, p.status, p.hidden_reason, (p.deleted_at IS NOT NULL) AS deleted,
               p.created_at, p.updated_at, p.edited, p.version,
               p.conditions_weather_type, p.conditions_feels_like, p.conditions_band, p.conditions_observed_at,
               p.helpful_count, p.trusted_helpful_count, p.hot_score, p.reply_count
        FROM posts p CROSS JOIN LATERAL (\(PlanTrick.fenced("SELECT display_name FROM accounts WHERE id = p.author_id"))) a JOIN regions r ON r.id = p.region_id
        """

    /// Positions of `select`'s columns. Every post query starts with `select`, so rows are decoded by
    /// position instead of looking each name up (a list decodes 360 values per page).
    enum Column: Int, CaseIterable {
        case id, authorID, authorName, regionID, nameEnglish, nameKorean, countryCode
        case weatherType, category, title, body, status, hiddenReason, deleted, createdAt, updatedAt, edited, version
        case conditionsWeatherType, conditionsFeelsLike, conditionsBand, conditionsObservedAt
        case helpfulCount, trustedHelpfulCount, hotScore, replyCount

        var name: String {
            ["id", "author_id", "author_name", "region_id", "name_en", "name_ko", "country_code", "weather_type", "category", "title",
             "body", "status", "hidden_reason", "deleted", "created_at", "updated_at", "edited", "version",
             "conditions_weather_type", "conditions_feels_like", "conditions_band", "conditions_observed_at",
             "helpful_count", "trusted_helpful_count", "hot_score", "reply_count"][rawValue]
        }
    }

    /// A query of `select` rows with each post's images joined to it (CONTRACT §8): one statement per page, with
    /// or without images. A post's row is repeated once per image, with `helped_by_me` for `viewer` (one index probe
    /// per post of the page) and the image's columns (`MediaRecords.columns`) after its own, NULL when it has none;
    /// posts in the list's order (`sort`), images in display order.
    /// The sort is over the page's rows only: the query inside still walks its index in order (`ListPlanTests`).
    /// (A JSON column per post, decoded per row, was half of a list request's CPU with two images a post.)
    static func withMedia(_ query: SQLQuery, viewer: SQLQuery? = nil, sort: PostSort = .new) -> SQLQuery {
        var sql: SQLQuery = "SELECT page.*, "
        if let viewer {
            sql.append("EXISTS (SELECT 1 FROM helpful_marks h WHERE h.post_id = page.id AND h.account_id = \(viewer)) AS helped_by_me, " as SQLQuery)
        } else {
            sql.append("false AS helped_by_me, ")
        }
        sql.append("\(raw: MediaRecords.columns) FROM (")
        sql.append(query)
        // LATERAL behind OFFSET 0 (which keeps the planner from flattening it): one `media_post_idx` probe per post
        // of the page. A plain LEFT JOIN lets the planner hash the whole media table for every page instead.
        sql.append(") page LEFT JOIN LATERAL (\(raw: PlanTrick.fenced("SELECT * FROM media m WHERE m.post_id = page.id"))) m ON true ORDER BY \(raw: sort.order(of: "page")), m.position")
        return sql
    }

    /// `withMedia` with `helped_by_me` for account `viewer`.
    static func withMedia(_ query: SQLQuery, viewer: Int?, sort: PostSort = .new) -> SQLQuery {
        withMedia(query, viewer: viewer.map { "\($0)" } as SQLQuery?, sort: sort)
    }

    /// `byID` with `helped_by_me` for account `viewer`.
    static func byID(_ id: Int, viewer: Int?) -> SQLQuery {
        byID(id, viewer: viewer.map { "\($0)" } as SQLQuery?)
    }

    /// The one post `id`, with its images.
    static func byID(_ id: Int, viewer: SQLQuery? = nil) -> SQLQuery {
        withMedia("\(raw: select) WHERE p.id = \(id)", viewer: viewer)
    }

    /// Posts from rows of `withMedia`.
    static func posts(_ rows: some Sequence<PostgresRow>) throws -> [Post] {
        let helpedColumn = Column.allCases.count
        let mediaColumn = helpedColumn + 1
        var posts: [Post] = []
        for row in rows {
            let id = try row.decode(Int.self, at: Column.id.rawValue)
            if posts.last?.id != id {
                var post = try post(from: row)
                post.helpedByMe = try row.decode(Bool.self, at: helpedColumn)
                posts.append(post)
            }
            if try row.decode(Int?.self, at: mediaColumn) != nil {
                posts[posts.count - 1].media.append(try MediaRecords.media(from: row, at: mediaColumn))
            }
        }
        return posts
    }

    private static func post(from row: PostgresRow) throws -> Post {
        assert(Column.allCases.allSatisfy { row.columns.names[$0.rawValue] == $0.name }, "post rows must start with PostgresPostStore.select")
        func value<T: PostgresDecodable>(_: T.Type, _ column: Column) throws -> T { try row.decode(T.self, at: column.rawValue) }
        func optional<T: PostgresDecodable>(_: T.Type, _ column: Column) throws -> T? { try row.decode(T?.self, at: column.rawValue) }
        return Post(
            id: try value(Int.self, .id),
            authorID: try value(Int.self, .authorID),
            authorDisplayName: try value(String.self, .authorName),
            region: RegionSummary(
                id: try value(Int.self, .regionID),
                nameEnglish: try value(String.self, .nameEnglish),
                nameKorean: try optional(String.self, .nameKorean),
                countryCode: try value(String.self, .countryCode)
            ),
            weatherType: try UnknownStoredValue.decode(WeatherType.self, value(String.self, .weatherType), column: "posts.weather_type"),
            category: try UnknownStoredValue.decode(Category.self, value(String.self, .category), column: "posts.category"),
            title: try optional(String.self, .title),
            body: try value(String.self, .body),
            status: try UnknownStoredValue.decode(PostStatus.self, value(String.self, .status), column: "posts.status"),
            hiddenReason: try optional(String.self, .hiddenReason),
            deleted: try value(Bool.self, .deleted),
            createdAt: try value(Date.self, .createdAt),
            updatedAt: try value(Date.self, .updatedAt),
            edited: try value(Bool.self, .edited),
            version: try value(Int.self, .version),
            media: [],
            conditions: try conditions(from: row),
            helpfulCount: try value(Int.self, .helpfulCount),
            trustedHelpfulCount: try value(Int.self, .trustedHelpfulCount),
            hotScore: try value(Double.self, .hotScore),
            replyCount: try value(Int.self, .replyCount)
        )
    }

    /// The post's conditions (CONTRACT §9), nil when it has none (the four columns are NULL together).
    private static func conditions(from row: PostgresRow) throws -> PostConditions? {
        guard let type = try row.decode(String?.self, at: Column.conditionsWeatherType.rawValue) else { return nil }
        return PostConditions(
            weatherType: try UnknownStoredValue.decode(WeatherType.self, type, column: "posts.conditions_weather_type"),
            feelsLike: try row.decode(Double.self, at: Column.conditionsFeelsLike.rawValue),
            band: try UnknownStoredValue.decode(FeelsLikeBand.self, row.decode(String.self, at: Column.conditionsBand.rawValue), column: "posts.conditions_band"),
            observedAt: try row.decode(Date.self, at: Column.conditionsObservedAt.rawValue)
        )
    }

    public func create(
        post: NewPost, status: PostStatus, by caller: Caller,
        allow: @escaping @Sendable (Identity) throws -> (idempotency: IdempotencyKey?, admission: Admission)
    ) async throws -> (Post, replayed: Bool) {
        try await database.transaction { connection in
            let identity = try caller.identity(on: connection)
            let authorID = identity.accountID
            let (idempotency, admission) = try allow(identity)
            if let idempotency, case .replay(let postID, let requestHash) = try idempotency.claim(on: connection) {
                guard requestHash == idempotency.requestHash else { throw BoardError.idempotencyConflict }
                guard let existing = try Self.posts(connection.query(Self.byID(postID))).first else {
                    throw BoardError.idempotencyConflict
                }
                return (existing, true)
            }
            try admission.admit(on: connection)
            // The caller's check holds the author's rows: an account deletion waits for this post, then takes it.
            let id = try connection.query(
                """
                INSERT INTO posts (author_id, region_id, weather_type, category, title, body, status, hidden_reason,
                                   conditions_weather_type, conditions_feels_like, conditions_band, conditions_observed_at)
                VALUES (\(authorID), \(post.regionID), \(post.weatherType.rawValue), \(post.category.rawValue), \(post.title), \(post.body),
                        \(status.rawValue), \(status == .hidden ? "filter" : nil),
                        \(post.conditions?.weatherType.rawValue), \(post.conditions?.feelsLike), \(post.conditions?.band.rawValue),
                        \(post.conditions?.observedAt))
                RETURNING id
                """
            )[0].decode(Int.self, "id")
            // Before its images: attaching them adds their alt texts to this row (sql/0023's trigger).
            try Self.index(postID: id, title: post.title, body: post.body, on: connection)
            if !post.mediaIDs.isEmpty {
                _ = try MediaRecords.attach(post.mediaIDs, to: id, ownerID: authorID, on: connection)
            }
            if status == .hidden {
                try Self.queueForFilter(postID: id, connection: connection)
            }
            try idempotency?.complete(resourceID: id, on: connection)
            return (try Self.posts(connection.query(Self.byID(id)))[0], false)
        }
    }

    /// Runs `check` on what decides who may see post `id` (`PostAccess`), inside the caller's transaction; `notFound`
    /// when there is no such post.
    static func checkAccess(_ id: Int, on connection: PostgresConnection, _ check: (PostAccess) throws -> Void) throws {
        guard let row = try connection.query(Self.accessQuery(id)).first else {
            throw BoardError.notFound("post")
        }
        try check(Self.access(from: row))
    }

    /// What decides who may see post `id`: its `accessColumns`.
    static func accessQuery(_ id: Int) -> SQLQuery {
        "SELECT \(raw: accessColumns) FROM posts WHERE id = \(id)"
    }

    /// The columns of `posts` that `access(from:)` decodes.
    static let accessColumns = "author_id, status, hidden_reason, deleted_at IS NOT NULL AS deleted"

    static func access(from row: PostgresRow) throws -> PostAccess {
        PostAccess(
            authorID: try row.decode(Int.self, "author_id"),
            state: ContentState(
                status: try UnknownStoredValue.decode(PostStatus.self, row.decode(String.self, "status"), column: "posts.status"),
                hiddenReason: try row.decode(String?.self, "hidden_reason"),
                deleted: try row.decode(Bool.self, "deleted")
            )
        )
    }

    public func post(id: Int, viewer: Int?) async throws -> Post? {
        try Self.posts(await database.query(Self.byID(id, viewer: viewer))).first
    }

    public func read(id: Int, viewer: Viewer) async throws -> (Post?, Viewer) {
        try await routed(viewer) { store, viewer in
            let (rows, reader) = try await SessionGate.read(store.database, for: viewer) { Self.byID(id, viewer: Visibility($0).account) }
            return (try Self.posts(rows).first, reader)
        }
    }

    public func edit(id: Int, by caller: Caller, _ decide: @escaping @Sendable (Post, Identity) throws -> PostEdit?) async throws -> (Post, removedMedia: [String]) {
        try await database.fencedTransaction(reads) { connection, fence in
            let identity = try caller.identity(on: connection)
            // The row lock serializes edits of this post: a second edit waits here until the first commits,
            // then reads (READ COMMITTED: a fresh snapshot per statement) and merges with its result.
            guard let current = try Self.posts(connection.query(Self.withMedia("\(raw: Self.select) WHERE p.id = \(id) FOR UPDATE OF p"))).first else {
                throw BoardError.notFound("post")
            }
            guard let edit = try decide(current, identity) else { return (current, []) }
            // The revision is the locked row as it was: the version this edit replaces.
            try connection.execute(
                """
                INSERT INTO post_revisions (post_id, weather_type, category, title, body, version)
                SELECT id, weather_type, category, title, body, version FROM posts WHERE id = \(id)
                """
            )
            let status = edit.status?.rawValue
            try connection.execute(
                """
                UPDATE posts SET weather_type = \(edit.weatherType.rawValue), category = \(edit.category.rawValue), title = \(edit.title),
                    body = \(edit.body), edited = true, updated_at = now(), version = version + 1,
                    status = COALESCE(\(status), status),
                    hidden_reason = CASE WHEN \(status) = 'hidden' THEN 'filter' ELSE hidden_reason END
                WHERE id = \(id)
                """
            )
            try Self.index(postID: id, title: edit.title, body: edit.body, on: connection)
            let removed = try edit.mediaIDs.map { try MediaRecords.attach($0, to: id, ownerID: current.authorID, on: connection) } ?? []
            if edit.status == .hidden {
                try Self.queueForFilter(postID: id, connection: connection)
                fence.fence()
            }
            return (try Self.posts(connection.query(Self.byID(id)))[0], removed)
        }
    }

    /// Files the term filter's report, so a held post shows up in the moderation queue.
    static func queueForFilter(postID: Int, connection: PostgresConnection) throws {
        try connection.execute(
            """
            INSERT INTO reports (post_id, reporter_id, reason, reported_title, reported_body, reported_media)
            SELECT id, NULL, 'filter', title, body, \(raw: MediaRecords.snapshot) FROM posts WHERE id = \(postID)
            """
        )
    }

    public func delete(id: Int, by caller: Caller, _ decide: @escaping @Sendable (Post, Identity) throws -> PostDeletion) async throws -> (Post, PostDeletion) {
        try await database.fencedTransaction(reads) { connection, fence in
            let identity = try caller.identity(on: connection)
            guard let post = try Self.posts(connection.query(Self.withMedia("\(raw: Self.select) WHERE p.id = \(id) FOR UPDATE OF p"))).first else {
                throw BoardError.notFound("post")
            }
            let deletion = try decide(post, identity)
            switch deletion {
            case .none: break
            case .own:
                try connection.execute("UPDATE posts SET deleted_at = now(), deleted_by = \(identity.accountID) WHERE id = \(id) AND deleted_at IS NULL")
            case .logged:
                guard try PostgresModerationStore.deleteLogged(.post(id), by: identity.accountID, on: connection) else { return (post, .none) }
            }
            if deletion != .none { fence.fence() }
            return (post, deletion)
        }
    }

    public func revisions(postID: Int) async throws -> [PostRevision] {
        try await database.query(
            "SELECT weather_type, category, title, body, replaced_at FROM post_revisions WHERE post_id = \(postID) ORDER BY id"
        ).map(PostRevision.init(row:))
    }
}

extension PostgresPostStore {
    /// One trip to the database's thread for the whole call: the post's access row, `check`, the mark and the state
    /// read back, in one transaction: one hop to the database's thread per mark.
    public func markHelpful(
        postID: Int, by caller: Caller, trustAgeSeconds: Int, check: @escaping @Sendable (PostAccess, Identity) throws -> Admission
    ) async throws -> HelpfulState {
        try await database.transaction { connection in
            let identity = try caller.identity(on: connection)
            let accountID = identity.accountID
            var admission: Admission?
            try Self.checkAccess(postID, on: connection) { admission = try check($0, identity) }
            // The marker's row is held since the caller's check (`FOR SHARE`): a ban, unban, registration or deletion of
            // it waits for this mark to commit, and its trigger (sql/0021) then sees the mark; this mark sees the account
            // as it is after one.
            let inserted = try connection.query(
                """
                WITH marker AS (
                    SELECT id, \(TrustedAccount.condition("accounts", ageSeconds: trustAgeSeconds)) AS trusted, banned
                    FROM accounts WHERE id = \(accountID) AND deleted_at IS NULL
                )
                INSERT INTO helpful_marks (post_id, account_id, trusted, counted)
                SELECT p.id, marker.id, marker.trusted, marker.trusted AND NOT marker.banned
                FROM marker, posts p WHERE p.id = \(postID) AND p.deleted_at IS NULL
                ON CONFLICT (post_id, account_id) DO NOTHING
                RETURNING post_id
                """
            )
            // Only a new mark is charged; a refusal rolls it back.
            if !inserted.isEmpty { try admission?.admit(on: connection) }
            return try Self.helpfulState(postID: postID, accountID: accountID, on: connection)
        }
    }

    public func unmarkHelpful(postID: Int, by caller: Caller, check: @escaping @Sendable (PostAccess, Identity) throws -> Void) async throws -> HelpfulState {
        try await database.transaction { connection in
            let identity = try caller.identity(on: connection)
            let accountID = identity.accountID
            try Self.checkAccess(postID, on: connection) { try check($0, identity) }
            try connection.execute("DELETE FROM helpful_marks WHERE post_id = \(postID) AND account_id = \(accountID)")
            return try Self.helpfulState(postID: postID, accountID: accountID, on: connection)
        }
    }

    /// The post's count and the account's mark as this transaction left them.
    static func helpfulState(postID: Int, accountID: Int, on connection: PostgresConnection) throws -> HelpfulState {
        let rows = try connection.query(
            """
            SELECT p.helpful_count, EXISTS (SELECT 1 FROM helpful_marks h WHERE h.post_id = p.id AND h.account_id = \(accountID)) AS helped
            FROM posts p WHERE p.id = \(postID) AND p.deleted_at IS NULL
            """
        )
        guard let row = rows.first else { throw BoardError.notFound("post") }
        return HelpfulState(helpfulCount: try row.decode(Int.self, "helpful_count"), helpedByMe: try row.decode(Bool.self, "helped"))
    }
}
