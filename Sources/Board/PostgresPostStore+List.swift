import Database
import Foundation
import Vocabulary

/// The list statements, composed of parts that each live in one place:
/// - who may see what: `Visibility.branches`, merged by `listQuery`;
/// - the filters: `filters(_:walking:)`, with the walked column chosen by `walkColumn` / `rangeColumn`;
/// - the blocks: `notBlocked`;
/// - the order and its keyset cursor: `PostSort` (its key and keyset), placed after the filter shape's leading
///   columns by `order`.
/// `ListPlanTests`, `RankedPlanTests` and `ScalePlanTests` EXPLAIN what they compose.
extension PostgresPostStore {
    /// The column whose index a public list walks: the most selective equality filter.
    enum WalkColumn: String {
        case author = "p.author_id", region = "p.region_id", weatherType = "p.weather_type", category = "p.category"
    }

    static func walkColumn(_ query: PostQuery) -> WalkColumn? {
        // An author has few posts, then a region few compared with a weather type or a category.
        if query.authorID != nil { return .author }
        if query.regionID != nil { return .region }
        if query.weatherType != nil { return .weatherType }
        if query.category != nil { return .category }
        return nil
    }

    /// The column `filters` writes as a range: the walked one, except for a weatherType+category walk (the index on
    /// `(weather_type, category, id DESC)`), where the weather type stays an equality and the category is the range:
    /// the index scan then starts and stops at the pair. With the range on the weather type it went on through every
    /// entry of that type after the pair: 3 ms, a fifth of the throughput, for a moderator's page of a rare pair at
    /// 10M posts (the unlisted branch). A region walk keeps its range on the region: there, the pair's equality made
    /// PostgreSQL estimate a handful of rows and sort them (ScalePlanTests).
    static func rangeColumn(_ query: PostQuery) -> WalkColumn? {
        let walk = walkColumn(query)
        return walk == .weatherType && query.category != nil ? .category : walk
    }

    /// The filter part shared by every list query.
    ///
    /// The walked column's equality (`rangeColumn`) is written as `col >= $n AND col <= $n`. Same rows, but PostgreSQL
    /// no longer treats the column as a constant, so `ORDER BY col, p.id DESC` (see `order`) can only be
    /// read in order from the index that leads with that column. Written as `col = $n`, the generic
    /// plan may walk the primary key backwards and filter instead: cheap while weather types are evenly
    /// mixed, but when the newest thousands of posts are all "rain", a "snow" list reads every one of
    /// them before it finds 21 (measured: 5 ms instead of 0.3 ms at 21k posts, and growing with the table).
    ///
    /// `unindexed` writes the filters but the author's as expressions no index matches (`p.region_id + 0`,
    /// `p.category || ''`): a walk that must go through one author's index (`ownUnlisted`) then cannot be planned
    /// through the index of its filter shape instead, reading that shape's unlisted posts of every author to find one
    /// author's few. (The author's own equality stays: with it unindexed too, a member's list of another author was
    /// planned through the unlisted posts of everyone, 19 req/s at 10M posts in bench/scale.)
    static func filters(_ query: PostQuery, walking walk: WalkColumn? = nil, unindexed: Bool = false) -> SQLQuery {
        var sql: SQLQuery = ""
        func equal(_ column: WalkColumn, _ value: some PostgresEncodable) {
            if unindexed, column != .author {
                let expression = column == .weatherType || column == .category ? "\(column.rawValue) || ''" : "\(column.rawValue) + 0"
                sql.append(" AND \(raw: expression) = \(value)" as SQLQuery)
            } else if column == walk {
                sql.append(" AND \(raw: column.rawValue) >= \(value) AND \(raw: column.rawValue) <= \(value)" as SQLQuery)
            } else {
                sql.append(" AND \(raw: column.rawValue) = \(value)" as SQLQuery)
            }
        }
        if let weatherType = query.weatherType { equal(.weatherType, weatherType.rawValue) }
        if let category = query.category { equal(.category, category.rawValue) }
        if let regionID = query.regionID { equal(.region, regionID) }
        if let authorID = query.authorID { equal(.author, authorID) }
        if query.sort == .new, let before = query.before { sql.append(" AND p.id < \(before)" as SQLQuery) }
        if query.sort != .new, let after = query.after { sql.append(PostSort.keyset(after)) }
        return sql
    }

    /// `ORDER BY` that only the partial index matching the filters can yield without a sort (with the
    /// walked column written as a range in `filters`).
    /// The sort's key (`PostSort.orderKey`) follows the filter shape's leading columns.
    static func order(_ query: PostQuery) -> String {
        let key = query.sort.orderKey
        switch walkColumn(query) {
        case .author: return " ORDER BY p.author_id, \(key)"
        case .region: return query.weatherType != nil ? " ORDER BY p.region_id, p.weather_type, \(key)" : " ORDER BY p.region_id, \(key)"
        case .weatherType: return query.category != nil ? " ORDER BY p.weather_type, p.category, \(key)" : " ORDER BY p.weather_type, \(key)"
        case .category: return " ORDER BY p.category, \(key)"
        case nil: return " ORDER BY \(key)"
        }
    }

    public func list(_ query: PostQuery, viewer: Viewer) async throws -> [Post] {
        try await routed(viewer) { try await $0.listHere(query, viewer: viewer) }
    }

    /// `list` on this store's own pool.
    func listHere(_ query: PostQuery, viewer: Viewer) async throws -> [Post] {
        if let search = query.search { return try await searchList(query, search: search, viewer: viewer) }
        if query.sort == .fit { return try await fitList(query, viewer: viewer) }
        return try Self.posts(await database.query(Self.withMedia(Self.listQuery(query, viewer: viewer), viewer: viewer.accountID, sort: query.sort)))
    }

    /// The one statement behind `list` (the plan tests EXPLAIN it): one walk per part of the reader's view
    /// (`Visibility.branches`) and per `condition` (a `fit` group's bands: `fitGroupQuery`), each walking one
    /// index in the sort's order and reading a page (`SQLQuery.page`), merged by the sort's key. A single walk (an
    /// anonymous reader's, or a member's list of another author, of one condition) is the page itself.
    static func listQuery(_ query: PostQuery, viewer: Viewer, conditions: [SQLQuery] = [""]) -> SQLQuery {
        let walks = Visibility(viewer).branches(author: query.authorID).flatMap { branch in conditions.map { (branch, $0) } }
        guard walks.count > 1 else {
            // One walk: an anonymous reader's, or a member's list of another author (whose blocks still apply).
            return (viewer.accountID.map { "WITH " + Self.blocked(by: $0) + " " } ?? "")
                + Self.branch(.visible, query, head: Self.select, blocks: viewer.accountID != nil, condition: conditions.first ?? "").page(limit: query.limit)
        }
        // A ranked page merges its walks by score, so the candidates carry it.
        let candidate = query.sort.scoreColumn.map { "SELECT p.id, p.\($0) AS score FROM posts p" } ?? "SELECT p.id FROM posts p"
        var sql: SQLQuery = "WITH "
        if let me = viewer.accountID { sql.append(Self.blocked(by: me) + ", ") }
        sql.append("ids AS ((")
        for (index, (branch, condition)) in walks.enumerated() {
            if index > 0 { sql.append(") UNION ALL (") }
            sql.append(Self.branch(branch, query, head: candidate, blocks: viewer.accountID != nil, condition: condition).page(limit: query.limit))
        }
        // The page is chosen among the ids alone; only its posts are joined with their authors and regions (joining
        // every candidate, up to twice the page, and keeping half was half of the join wasted on every signed-in list).
        var page = SQLQuery(stringLiteral: "SELECT id FROM ids ORDER BY " + (query.sort.scoreColumn == nil ? "id DESC" : "score DESC, id DESC"))
        page = page.page(limit: query.limit)
        sql.append(")) ")
        sql.append(SQLQuery(stringLiteral: Self.select + " WHERE p.id IN (") + page + SQLQuery(stringLiteral: " ) ORDER BY " + query.sort.orderKey))
        return sql
    }

    /// One branch: `head` (`SELECT … FROM posts p …`), the branch's rows, the filters, the reader's blocks (every
    /// branch but one's own posts, a moderator's included: CONTRACT §3) and the order its index yields.
    /// `condition` narrows the branch further (a `fit` walk's band). `blocks`: a signed-in reader's, whose blocks the
    /// statement reads as `blocked` (`blocked(by:)`).
    static func branch(_ branch: Visibility.Branch, _ query: PostQuery, head: String, blocks: Bool, condition: SQLQuery = "") -> SQLQuery {
        var sql = SQLQuery(stringLiteral: head)
        switch branch {
        case .visible, .unlisted:
            sql.append(" WHERE ")
            sql.append(branch.condition("p"))
            // A `fit` walk's filters stay equalities, with its band (`PostgresPostStore+Fit.swift`).
            sql.append(Self.filters(query, walking: query.sort == .fit ? Self.fitRangeColumn(query) : Self.rangeColumn(query)))
            sql.append(condition)
            if blocks { sql.append(Self.notBlocked(author: query.authorID)) }
            sql.append(Self.order(query))
        case .ownUnlisted(let me):
            // One author's walk, through an index that leads with the author (the filters unindexed): planned through
            // the unlisted index of the filter shape, it read that shape's unlisted posts of every author to find one
            // author's few (3,000 rows for none in FitPlanTests).
            sql.append(" WHERE p.author_id >= \(me) AND p.author_id <= \(me) AND " as SQLQuery)
            sql.append(branch.condition("p"))
            sql.append(Self.filters(query, unindexed: true))
            sql.append(condition)
            sql.append(" ORDER BY p.author_id, \(query.sort.orderKey)")
        }
        return sql
    }

    /// `blocked`, a `WITH` query: the authors `viewer` blocks, read once for the whole statement (the lists'
    /// `notBlocked` walks hash it).
    ///
    /// Once: a `fit` page of a member or a moderator merges up to 26 walks (two branches, the bands of two groups),
    /// and with its own check of `blocks` each walk was planned by the table's statistics. On a small `blocks` (44
    /// rows in CI) that was a sequential scan of it in every walk, 1,138 rows read and thrown away for a page
    /// (FitPlanTests); where one account holds most blocks, an anti join probing `blocks_blocked_idx` for every
    /// walked post, reading the blocks of that post's author by every account (BlockPlanTests). Now one read of the
    /// reader's own blocks (`blocks_pkey`), then a hash.
    ///
    /// The reader's key is a range (`>= $n AND <= $n`, the same rows): PostgreSQL estimates a range at 0.5% of the
    /// table, where its estimate of `= $n` is the table over the number of blockers. Where a few accounts hold most
    /// blocks that was hundreds of rows, and the generic plan read every block of every account (a sequential scan of
    /// 2,048 rows for a reader with none, ListPlanTests).
    static func blocked(by viewer: Int) -> SQLQuery {
        "blocked AS MATERIALIZED (SELECT b.blocked_id FROM blocks b WHERE b.blocker_id >= \(viewer) AND b.blocker_id <= \(viewer))"
    }

    /// Leaves out the authors the reader blocks (CONTRACT §3: from the caller's lists, staff included): `blocked`
    /// of `blocked(by:)`, as a hash each walk probes once a row (`NOT IN` of an uncorrelated list is a hashed SubPlan;
    /// `blocked_id` and `author_id` are never NULL, so it means `NOT EXISTS`).
    /// With an `authorId` filter the block is checked once, for that author (a one-time filter of the plan): a
    /// reader listing an author they blocked reads nothing, instead of every post of that author one by one (9,000
    /// rows for a page at 10M posts).
    static func notBlocked(author: Int? = nil) -> SQLQuery {
        var sql: SQLQuery = ""
        if let author {
            sql.append(" AND NOT EXISTS (SELECT 1 FROM blocked ba WHERE ba.blocked_id = \(author))" as SQLQuery)
        }
        sql.append(" AND p.author_id NOT IN (SELECT bl.blocked_id FROM blocked bl)")
        return sql
    }

    public func listOwn(authorID: Int, before: Int?, limit: Int) async throws -> [Post] {
        try Self.posts(await database.query(Self.withMedia(Self.listOwnQuery(authorID: authorID, before: before, limit: limit))))
    }

    static func listOwnQuery(authorID: Int, before: Int?, limit: Int) -> SQLQuery {
        var sql = SQLQuery(stringLiteral: Self.select)
        // A range, not `=`, for the reason given at `filters`.
        sql.append(" WHERE p.author_id >= \(authorID) AND p.author_id <= \(authorID) AND p.deleted_at IS NULL" as SQLQuery)
        if let before { sql.append(" AND p.id < \(before)" as SQLQuery) }
        sql.append(" ORDER BY p.author_id, p.id DESC")
        return sql.page(limit: limit)
    }
}
