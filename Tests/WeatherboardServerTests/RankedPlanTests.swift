@testable import Board
import Database
import Foundation
import Testing
import Vocabulary

/// The ranked lists (`sort=top|hot`, sql/0021) walk the index of their filter shape in score order: no sequential
/// scan, no sort of more than a page, about a page of rows read, for every reader, on the first page and after a
/// cursor — while the newest and the best-marked posts are a spam wave of another shape.
@Suite("Ranked list plans")
struct RankedPlanTests {
    /// Each filter shape and the index its anonymous ranked page walks (`<shape>_top_idx` / `<shape>_hot_idx`).
    static let cases: [(PostQuery, String)] = [
        (PostQuery(), "posts_public"),
        (PostQuery(weatherType: .snow), "posts_public_weather"),
        (PostQuery(category: .food), "posts_public_category"),
        (PostQuery(regionID: ListPlanTests.seoul), "posts_public_region"),
        (PostQuery(authorID: 0), "posts_public_author"),
        (PostQuery(weatherType: .snow, category: .food), "posts_public_wc"),
        (PostQuery(weatherType: .snow, regionID: ListPlanTests.seoul), "posts_public_rw"),
        (PostQuery(category: .food, regionID: ListPlanTests.seoul), "posts_public_region"),
        (PostQuery(weatherType: .snow, category: .food, regionID: ListPlanTests.seoul), "posts_public_rw"),
    ]

    /// The most rows any Sort node of an EXPLAIN ANALYZE plan took in (its first child's rows; a node's own
    /// `rows=` is what it gave out, a page even when it sorted thousands). 0 when there is no sort.
    static func largestSort(_ plan: String) -> Int {
        let lines = plan.split(separator: "\n")
        func rows(_ line: Substring) -> Int? {
            line.range(of: "rows=").flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) }
        }
        var largest = 0
        for (i, line) in lines.enumerated() where line.contains("Sort (") || line.contains("Sort  (") {
            if let child = lines[(i + 1)...].first(where: { $0.contains("->") }), let n = rows(child) { largest = max(largest, n) }
        }
        return largest
    }

    @Test("every filter shape × top/hot × reader walks its index in score order, first page and after a cursor")
    func rankedPlans() async throws {
        let failures: [String] = try await TestDatabase.isolated(named: "ranked") { database in try await TestDatabase.inRolledBackTransaction(on: database, timeout: "120s") { connection in
            let authors = try connection.query("INSERT INTO accounts (display_name) VALUES ('rank-old'), ('rank-bulk') RETURNING id")
            let old = try authors[0].decode(Int.self, "id"), bulk = try authors[1].decode(Int.self, "id")
            try connection.execute(
                """
                INSERT INTO posts (author_id, region_id, weather_type, category, body, trusted_helpful_count, created_at)
                SELECT \(old), (ARRAY[\(ListPlanTests.seoul)::bigint, \(ListPlanTests.busan)::bigint])[1 + i % 2],
                       (ARRAY['clearSky','fewClouds','scatteredClouds','brokenClouds','showerRain','rain','thunderStorm','snow','mist'])[1 + i % 9],
                       (ARRAY['food','place','music','outfit','activity'])[1 + i % 5], 'old ' || i, i % 7, now() - make_interval(hours => i % 500)
                FROM generate_series(1, 3000) AS i
                """
            )
            // The newest and the best-marked posts are all of one other shape: a ranked walk that filters instead of
            // seeking would read all of them first.
            try connection.execute(
                """
                INSERT INTO posts (author_id, region_id, weather_type, category, body, trusted_helpful_count)
                SELECT \(bulk), \(ListPlanTests.busan), 'clearSky', 'music', 'new ' || i, 50 + i % 100 FROM generate_series(1, 30000) AS i
                """
            )
            try connection.execute("UPDATE posts SET status = 'hidden', hidden_reason = 'reports' WHERE author_id = \(bulk) AND id % 10 = 0")
            try TestDatabase.analyzeEveryRow(["posts"], on: connection)
            let middle = try connection.query("SELECT id, trusted_helpful_count, hot_score FROM posts WHERE author_id = \(old) ORDER BY id LIMIT 1 OFFSET 1500")[0]
            let cursors: [PostSort: PostSort.Position] = [
                .top: .top(trustedMarks: try middle.decode(Int.self, "trusted_helpful_count"), id: try middle.decode(Int.self, "id")),
                .hot: .hot(score: try middle.decode(Double.self, "hot_score"), id: try middle.decode(Int.self, "id")),
            ]
            let readers: [(String, Viewer)] = [
                ("anonymous", .anonymous), ("member", Viewer(accountID: old, isModerator: false)), ("moderator", Viewer(accountID: old, isModerator: true)),
            ]
            var failures: [String] = []
            for sort in [PostSort.top, .hot] {
                for (base, index) in Self.cases {
                    for after in [nil, cursors[sort]] {
                        for (readerName, viewer) in readers {
                            var query = base
                            if query.authorID != nil { query.authorID = old }
                            query.limit = 21
                            query.sort = sort
                            query.after = after
                            let plan = try ListPlanTests.genericPlan(
                                PostgresPostStore.withMedia(PostgresPostStore.listQuery(query, viewer: viewer), viewer: viewer.accountID, sort: sort),
                                connection: connection
                            )
                            var problems: [String] = []
                            if plan.contains("Seq Scan on posts") { problems.append("a sequential scan") }
                            // The merged member and moderator pages sort at most two branches' pages of candidates.
                            if Self.largestSort(plan) > 2 * PlanBudget.page { problems.append("a sort of \(Self.largestSort(plan)) rows") }
                            let thrownAway = PlanBudget.postsThrownAway(plan)
                            if thrownAway.rows > thrownAway.bound { problems.append("\(thrownAway.rows) rows thrown away (at most \(thrownAway.bound))") }
                            if viewer == .anonymous, !plan.contains("\(index)_\(sort.rawValue)_idx") { problems.append("not \(index)_\(sort.rawValue)_idx") }
                            if !problems.isEmpty {
                                failures.append("\(readerName) \(sort) \(query) after \(String(describing: after)): \(problems.joined(separator: ", "))\n\(plan)")
                            }
                        }
                    }
                }
            }
            return failures
        } }
        #expect(failures.isEmpty, "\(failures.count) plans:\n\(failures.prefix(4).joined(separator: "\n\n"))")
    }
}
