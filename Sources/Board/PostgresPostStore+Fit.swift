import Database
import Vocabulary

/// The `fit` list (CONTRACT §9, `PostSort.fit`): the groups of the order read in turn, one statement each, until the
/// page is full.
///
/// Which group a post is in depends on the band outside, which no stored column can know, so a group is walked band
/// by band: each band's posts are one index walk in `hot` order (the band, written as a range: see below, on the filter
/// shape's `…_fit_idx` of sql/0022; `IS NULL` for the posts without conditions), and the walks of a group (and of the
/// reader's branches) are merged by score (`listQuery` with one condition per band). The first group is one band:
/// when it fills the page, as it does on a board of any size, a page is one statement with one walk, the cost of a
/// `hot` page. A sparse group costs one more statement, with at most a page read per walk, so a page costs the same
/// at 10M posts as at 10k. After a cursor the groups before its group are left out, and its group's walks start
/// strictly after its `(score, id)`.
///
/// A walk's filters are equalities and its band too, written in the order `PostSort.fit.orderKey` names, so the
/// scan starts at the band (and after the cursor) and stops at its end. With a filter column written as a range
/// instead (`rangeColumn`, as the other orders do), PostgreSQL cannot stop a scan at the end of a later column's
/// value, and the walk of a band with fewer posts than a page reads on through every entry of the shape after it
/// (`FitPlanTests`).
///
/// The band itself is the one range (`p.conditions_band >= $b AND p.conditions_band <= $b`, the same rows): after the
/// filters' equalities the scan still starts at the band and the cursor and stops at the band's end, and the band
/// stays a column of the order (`PostSort.fit.orderKey`), which only the `…_fit_idx` index yields. Written as `= $b`,
/// the band was a constant to the planner and the shape's `hot` index yielded the same order; a signed-in reader's
/// walk, which reads each post's author for the blocks, was planned on the `hot` index with the band as a filter
/// (cheaper by its estimate than the fit index read with the heap): on the 1M-post bench board a member's page
/// after a cursor read 429 rows (463 buffers) for 22, and in FitPlanTests on that board 55,006 and 109,591 rows were
/// thrown away; as a range, 27 buffers.
extension PostgresPostStore {
    /// `condition` narrows every walk further (a search's: `PostgresPostStore+Search.swift`).
    func fitList(_ query: PostQuery, viewer: Viewer, condition: SQLQuery = "") async throws -> [Post] {
        let (outside, start) = Self.fitStart(query)
        var posts: [Post] = []
        for group in PostSort.FitGroup.allCases where group >= start {
            var part = query
            part.after = group == start ? query.after : nil
            part.limit = query.limit - posts.count
            posts += try Self.posts(
                await database.query(Self.withMedia(Self.fitGroupQuery(group, outside: outside, part, viewer: viewer, condition: condition), viewer: viewer.accountID, sort: .fit))
            )
            if posts.count >= query.limit { break }
        }
        return posts
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
            var sql: SQLQuery = band.map { " AND p.conditions_band >= \($0.rawValue) AND p.conditions_band <= \($0.rawValue)" } ?? " AND p.conditions_band IS NULL"
            sql.append(condition)
            return sql
        }
        return listQuery(query, viewer: viewer, conditions: conditions)
    }
}

extension PostgresPostStore {
    /// A `fit` walk's one range: the author's, when it filters by author (written as an equality, a member's or a
    /// moderator's page of one author was planned at 1M posts as a bitmap scan of all the author's posts and a sort);
    /// none otherwise (every filter an equality, so the walk stops at its band's end).
    static func fitRangeColumn(_ query: PostQuery) -> WalkColumn? {
        query.authorID != nil ? .author : nil
    }
}
