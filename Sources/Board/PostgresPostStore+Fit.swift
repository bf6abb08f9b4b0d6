import Database
import Vocabulary

/// The `fit` page (CONTRACT §9, `PostSort.fit`) of one branch of a reader's view.
///
/// Which group a post is in depends on the band outside, which no stored column can know, so the page is walked
/// band by band: each band's posts are one index walk in `hot` order (`p.conditions_band = $b`, on the filter
/// shape's `…_fit_idx` of sql/0022; `IS NULL` for the posts without conditions), the walks of a group are merged
/// by score, and the groups are read in turn:
///
///     SELECT id, score, grp FROM (
///         (group 0: the band outside, its walk, a page)
///         UNION ALL (group 1: the neighbours' walks merged, a page)
///         UNION ALL (group 2: the other bands' walks merged, a page)
///         UNION ALL (group 3: the posts without conditions, a page)
///     ) fit LIMIT $n
///
/// A walk's filters are equalities and its band the one range (`conditions_band >= $b AND conditions_band <= $b`, read
/// in the order `PostSort.fit.orderKey` names), so only a `…_fit_idx` yields the order, and the scan starts at the
/// band and stops at its end: with the range on a filter column instead, PostgreSQL cannot stop a scan at the end of
/// a later column's value, and the walk of a band with fewer posts than a page would read on through every entry of
/// the shape after it.
///
/// The outer `LIMIT` over a plain `Append` stops as soon as the page is full: when the band outside fills the page,
/// the other eight walks never run (`FitPlanTests` holds the plan to that shape). Every walk reads at most a page,
/// so a page costs the same at 10M posts as at 10k. After a cursor, the groups before its group are left out and
/// its group's walks start strictly after its `(score, id)`.
extension PostgresPostStore {
    static func fitPage(_ branch: Branch, _ query: PostQuery, blocker: Int?) -> SQLQuery {
        let outside: FeelsLikeBand
        var start = PostSort.FitGroup.sameBand
        var position: PostSort.Position?
        if case .fit(let band, let group, _, _)? = query.after {
            (outside, start, position) = (band, group, query.after)
        } else {
            outside = query.fitBand ?? .mild
        }
        var sql: SQLQuery = "SELECT id, score, grp FROM ("
        for group in PostSort.FitGroup.allCases where group >= start {
            if group > start { sql.append(" UNION ALL ") }
            var walkQuery = query
            walkQuery.after = group == start ? position : nil
            var merged: SQLQuery = "SELECT id, score, \(raw: String(group.rawValue)) AS grp FROM ("
            for (index, band) in group.bands(outside: outside).enumerated() {
                if index > 0 { merged.append(" UNION ALL ") }
                let condition: SQLQuery = band.map { " AND p.conditions_band = \($0.rawValue)" } ?? " AND p.conditions_band IS NULL"
                merged.append("(")
                merged.append(
                    Self.branch(branch, walkQuery, head: "SELECT p.id, p.hot_score AS score FROM posts p", blocker: blocker, condition: condition)
                        .page(limit: query.limit)
                )
                merged.append(")")
            }
            merged.append(") walks ORDER BY score DESC, id DESC")
            sql.append("(")
            sql.append(merged.page(limit: query.limit))
            sql.append(")")
        }
        sql.append(") groups")
        return sql.page(limit: query.limit)
    }
}
