import Database
import Vocabulary

/// The `fit` list (CONTRACT §9, `PostSort.fit`): the groups of the order read in turn, one statement each, until the
/// page is full.
///
/// Which group a post is in depends on the band outside, which no stored column can know, so a group is walked band
/// by band: each band's posts are one walk of the filter shape's `…_fit_idx` (sql/0022) in `hot` order (`IS NULL` for
/// the posts without conditions), and the walks of a group and of the reader's branches are merged by score
/// (`listQuery` with one condition per band). When the first group fills the page, as it does on a board of any size,
/// a page is one walk, the cost of a `hot` page; a sparse group costs one more statement, each walk at most a page.
/// After a cursor the groups before its group are left out, and its group's walks start after its `(score, id)`.
///
/// A walk's filters are plain equalities and its band is the one range (`PlanTrick.equal`): the scan starts at the band
/// and the cursor and stops at the band's end, and only the fit index yields the order (docs/PLANS.md). A filter
/// written as a range too would keep the scan going past a sparse band through the rest of the shape.
extension PostgresPostStore {
    /// `condition` narrows every walk further (a search's: `PostgresPostStore+Search.swift`).
    /// The first group's statement checks a token still to be checked (`SessionGate`); the others read for the reader
    /// it found.
    func fitList(_ query: PostQuery, viewer: Viewer, condition: SQLQuery = "") async throws -> ([Post], Viewer) {
        let (outside, start) = Self.fitStart(query)
        var posts: [Post] = []
        var viewer = viewer
        for group in PostSort.FitGroup.allCases where group >= start {
            var part = query
            part.after = group == start ? query.after : nil
            part.limit = query.limit - posts.count
            let (rows, reader) = try await SessionGate.read(database, for: viewer) {
                Self.withMedia(Self.fitGroupQuery(group, outside: outside, part, viewer: $0, condition: condition), viewer: Visibility($0).account, sort: .fit)
            }
            viewer = reader
            posts += try Self.posts(rows)
            if posts.count >= query.limit { break }
        }
        return (posts, viewer)
    }

    /// The band the walk ranks for and the group it starts in: its cursor's, or the band outside from the first group.
    static func fitStart(_ query: PostQuery) -> (FeelsLikeBand, PostSort.FitGroup) {
        if case .fit(let band, let group, _, _)? = query.after { return (band, group) }
        // `PostService.list` refuses a `fit` list without a band; `.mild` only keeps this total.
        return (query.fitBand ?? .mild, .sameBand)
    }

    /// One group's page: its bands' walks for every branch of the reader's view, merged in `hot` order.
    static func fitGroupQuery(
        _ group: PostSort.FitGroup, outside: FeelsLikeBand, _ query: PostQuery, viewer: Viewer, condition: SQLQuery = ""
    ) -> SQLQuery {
        let conditions = group.bands(outside: outside).map { band -> SQLQuery in
            var sql: SQLQuery = band.map { " AND \(PlanTrick.equal("p.conditions_band", $0.rawValue))" } ?? " AND p.conditions_band IS NULL"
            sql.append(condition)
            return sql
        }
        return listQuery(query, viewer: viewer, conditions: conditions)
    }
}

extension PostgresPostStore {
    /// The filter a `fit` walk writes as a range besides its band: the author's, when it filters by author (as an
    /// equality, a member's page of one author was planned as a bitmap scan of all the author's posts and a sort);
    /// none otherwise, so the walk stops at its band's end.
    static func fitRangeColumn(_ query: PostQuery) -> WalkColumn? {
        query.authorID != nil ? .author : nil
    }
}
