/// What a list plan may read, derived from the page and the plan's shape, never tuned to a run: each plan suite runs
/// on a database of its own (`TestDatabase.isolated(named:)`) with statistics from every row, so two runs plan and read
/// alike (FitPlanTests' 1,400 walks: the same rows and buffers twice; the other suites differ by at most 10 rows).
enum PlanBudget {
    /// The rows one index walk returns at most: the tests ask for 21 (a page of 20 and the row that says another
    /// follows), and one to spare.
    static let page = 22

    /// The most selective filter a walk applies to rows its index does not order by: the category of a
    /// category+region walk on the region's index keeps one post in five (five categories, seeded evenly).
    static let heaviestFilter = 5

    /// Rows of `posts` that filters threw away in `plan`, and the most it may throw away: twice a page under the
    /// heaviest filter for each walk of `posts`. A walk that filters instead of seeking (the primary key read
    /// backwards past 30,000 newer posts of another shape, a band read as a filter) throws away thousands.
    static func postsThrownAway(_ plan: String) -> (rows: Int, bound: Int) {
        var rows = 0, walks = 0, onPosts = false
        for line in plan.split(separator: "\n") {
            if line.contains("->") || line.contains("Scan") {
                onPosts = line.contains(" on posts ")
                if onPosts, line.contains("Index Scan") || line.contains("Index Only Scan") { walks += 1 }
            }
            if onPosts, let range = line.range(of: "Rows Removed by Filter: "), let removed = Int(line[range.upperBound...].trimmingCharacters(in: .whitespaces)) {
                rows += removed
            }
        }
        return (rows, max(walks, 1) * 2 * heaviestFilter * page)
    }

    /// The buffers an index walk that read `rows` rows (those a filter threw away included) may touch: a heap page for
    /// each row, and the index's pages from its root to a leaf plus the leaves it crossed, which `rows + 10` covers
    /// with room (measured: at most 4 more than the rows, on every walk of FitPlanTests). A walk that cannot stop at
    /// its band's end reads on through index pages that no row count shows.
    static func walkBuffers(rows: Int) -> Int {
        rows + rows + 10
    }
}
