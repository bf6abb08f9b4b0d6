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

    /// The column `filters` writes as a range (`PlanTrick.equal`): the walked one, except for a weatherType+category
    /// walk, where the category is the range so the scan of `(weather_type, category, id DESC)` stops at the pair's
    /// end. A region walk keeps its range on the region (the pair's equality was estimated at a handful of rows and
    /// sorted).
    static func rangeColumn(_ query: PostQuery) -> WalkColumn? {
        let walk = walkColumn(query)
        return walk == .weatherType && query.category != nil ? .category : walk
    }

    /// The filter part shared by every list query: the walked column (`walk`) as a range, so only the index that leads
    /// with it yields `order` (docs/PLANS.md). `unindexed` writes every filter but the author's as an expression no
    /// index matches (`PlanTrick.unindexed`), so a walk of one author's index (`ownUnlisted`) is never planned through
    /// the filter shape's index instead.
    static func filters(_ query: PostQuery, walking walk: WalkColumn? = nil, unindexed: Bool = false) -> SQLQuery {
        var sql: SQLQuery = ""
        func equal(_ column: WalkColumn, _ value: some PostgresEncodable) {
            if unindexed, column != .author {
                let expression = PlanTrick.unindexed(column.rawValue, text: column == .weatherType || column == .category)
                sql.append(" AND \(raw: expression) = \(value)")
            } else if column == walk {
                sql.append(" AND \(PlanTrick.equal(column.rawValue, value))")
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

    public func list(_ query: PostQuery, viewer: Viewer) async throws -> ([Post], Viewer) {
        try await routed(viewer) { try await $0.listHere(query, viewer: $1) }
    }

    /// `list` on this store's own pool.
    func listHere(_ query: PostQuery, viewer: Viewer) async throws -> ([Post], Viewer) {
        if let search = query.search {
            // A search reads the windows' candidates first: its token is checked by a statement of its own.
            let viewer = try await SessionGate.checked(viewer)
            return (try await searchList(query, search: search, viewer: viewer), viewer)
        }
        if query.sort == .fit { return try await fitList(query, viewer: viewer) }
        let (rows, reader) = try await SessionGate.read(database, for: viewer) {
            Self.withMedia(Self.listQuery(query, viewer: $0), viewer: Visibility($0).account, sort: query.sort)
        }
        return (try Self.posts(rows), reader)
    }

    /// The one statement behind `list` (the plan tests EXPLAIN it): one walk per part of the reader's view
    /// (`Visibility.branches`) and per `condition` (a `fit` group's bands: `fitGroupQuery`), each walking one
    /// index in the sort's order and reading a page (`SQLQuery.page`), merged by the sort's key. A single walk (an
    /// anonymous reader's, or a member's list of another author, of one condition) is the page itself.
    ///
    /// A member's view of one condition is two walks, the visible posts and the member's own unshown ones (nearly
    /// always none): each reads whole rows and the two are merged by the sort's key (`memberQuery`), without the
    /// candidates' second pass.
    static func listQuery(_ query: PostQuery, viewer: Viewer, conditions: [SQLQuery] = [""]) -> SQLQuery {
        let visibility = Visibility(viewer)
        let branches = visibility.branches(author: query.authorID)
        if conditions.count == 1, branches.count == 2, case .ownUnlisted(let me) = branches[1] {
            return memberQuery(query, me: me, condition: conditions[0])
        }
        return walksQuery(query, visibility: visibility, branches: branches, conditions: conditions)
    }

    /// A member's page of one condition: the visible walk (with the member's blocks) and the member's own unshown
    /// posts, each a page of whole rows in the sort's order, merged. The own walk is one probe of the author's
    /// unshown posts (an index that leads with the author), so the page costs an anonymous reader's single walk, the
    /// blocks and that probe: the merge of candidate ids first (`walksQuery`) re-read each post of the page by key
    /// and joined the authors and regions without caching them, twice the buffers of the single walk.
    static func memberQuery(_ query: PostQuery, me: SQLQuery, condition: SQLQuery) -> SQLQuery {
        var sql: SQLQuery = "WITH \(Self.blocked(by: me)) SELECT * FROM (("
        sql.append(Self.branch(.visible, query, head: Self.select, blocks: true, condition: condition).page(limit: query.limit))
        sql.append(") UNION ALL (")
        sql.append(Self.branch(.ownUnlisted(me), query, head: Self.select, blocks: false, condition: condition).page(limit: query.limit))
        sql.append(")) merged ORDER BY \(raw: query.sort.order(of: "merged"))")
        return sql.page(limit: query.limit)
    }

    /// `listQuery` of `branches`: the walks of every branch and condition, merged.
    static func walksQuery(_ query: PostQuery, visibility: Visibility, branches: [Visibility.Branch], conditions: [SQLQuery]) -> SQLQuery {
        let walks = branches.flatMap { branch in conditions.map { (branch, $0) } }
        let blocked = visibility.account
        guard walks.count > 1 else {
            // One walk: an anonymous reader's, or a member's list of another author (whose blocks still apply).
            return (blocked.map { "WITH " + Self.blocked(by: $0) + " " } ?? "")
                + Self.branch(.visible, query, head: Self.select, blocks: visibility.hasBlocks, condition: conditions.first ?? "").page(limit: query.limit)
        }
        // A ranked page merges its walks by score, so the candidates carry it.
        let candidate = query.sort.scoreColumn.map { "SELECT p.id, p.\($0) AS score FROM posts p" } ?? "SELECT p.id FROM posts p"
        var sql: SQLQuery = "WITH "
        if let me = blocked { sql.append("\(Self.blocked(by: me)), ") }
        sql.append("ids AS ((")
        for (index, (branch, condition)) in walks.enumerated() {
            if index > 0 { sql.append(") UNION ALL (") }
            sql.append(Self.branch(branch, query, head: candidate, blocks: visibility.hasBlocks, condition: condition).page(limit: query.limit))
        }
        // The page is chosen among the ids alone; only its posts are joined with their authors and regions.
        let page: SQLQuery = "SELECT id FROM ids ORDER BY \(raw: query.sort.scoreColumn == nil ? "id DESC" : "score DESC, id DESC")"
        sql.append(")) \(raw: Self.select) WHERE p.id IN (\(page.page(limit: query.limit)) ) ORDER BY \(raw: query.sort.orderKey)")
        return sql
    }

    /// One branch: `head` (`SELECT … FROM posts p …`), the branch's rows, the filters, the reader's blocks (every
    /// branch but one's own posts, a moderator's included: CONTRACT §3) and the order its index yields.
    /// `condition` narrows the branch further (a `fit` walk's band). `blocks`: a signed-in reader's, whose blocks the
    /// statement reads as `blocked` (`blocked(by:)`).
    static func branch(_ branch: Visibility.Branch, _ query: PostQuery, head: String, blocks: Bool, condition: SQLQuery = "") -> SQLQuery {
        var sql: SQLQuery = "\(raw: head)"
        switch branch {
        case .visible, .unlisted:
            sql.append(" WHERE ")
            sql.append(branch.condition("p"))
            // A `fit` walk's filters stay equalities, with its band (`PostgresPostStore+Fit.swift`).
            sql.append(Self.filters(query, walking: query.sort == .fit ? Self.fitRangeColumn(query) : Self.rangeColumn(query)))
            sql.append(condition)
            if blocks { sql.append(Self.notBlocked(author: query.authorID)) }
            sql.append("\(raw: Self.order(query))")
        case .ownUnlisted(let me):
            // One author's walk, through an index that leads with the author (the filters unindexed).
            sql.append(" WHERE \(PlanTrick.equal("p.author_id", me)) AND ")
            sql.append(branch.condition("p"))
            sql.append(Self.filters(query, unindexed: true))
            sql.append(condition)
            sql.append(" ORDER BY p.author_id, \(raw: query.sort.orderKey)")
        }
        return sql
    }

    /// `blocked`, a `WITH` query: the authors `viewer` blocks, read once for the whole statement from `blocks_pkey`,
    /// which every walk of a merged page (up to 26) hashes (`notBlocked`) instead of planning its own check of `blocks`
    /// by that table's statistics (docs/PLANS.md).
    static func blocked(by viewer: SQLQuery) -> SQLQuery {
        "blocked AS MATERIALIZED (SELECT b.blocked_id FROM blocks b WHERE \(PlanTrick.equal("b.blocker_id", viewer)))"
    }

    /// Leaves out the authors the reader blocks (CONTRACT §3: from the caller's lists, staff included): `blocked`
    /// of `blocked(by:)`, as a hash each walk probes once a row (`NOT IN` of an uncorrelated list is a hashed SubPlan;
    /// `blocked_id` and `author_id` are never NULL, so it means `NOT EXISTS`).
    /// With an `authorId` filter the block is checked once, for that author (a one-time filter of the plan): a
    /// reader listing an author they blocked reads nothing, not every post of that author one by one.
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
        var sql: SQLQuery = "\(raw: Self.select) WHERE \(PlanTrick.equal("p.author_id", authorID)) AND p.deleted_at IS NULL"
        if let before { sql.append(" AND p.id < \(before)" as SQLQuery) }
        sql.append(" ORDER BY p.author_id, p.id DESC")
        return sql.page(limit: limit)
    }
}
