@testable import Board
import Database
import Foundation
import Testing
import Vocabulary

/// The reader's blocks in the list statements (`PostgresPostStore.blocked(by:)`, `notBlocked`): read once a
/// statement, by the reader's own key, whatever the shape of `blocks`. Here one account holds 20,000 blocks (so
/// PostgreSQL's statistics say "a blocker has thousands"), and the reader blocks three of thirty busy authors. With a
/// check of `blocks` in each walk, each walk was planned on those statistics: an anti join over the blocks of every
/// account, or (on a small `blocks`, as in CI) a scan of the table in each of a `fit` page's 26 walks.
@Suite("Block plans")
struct BlockPlanTests {
    /// Problems of one statement's plan: `blocks` read more than once, or not by the reader's key, or joined.
    static func blockReads(_ plan: String) -> [String] {
        var problems: [String] = []
        let reads = plan.split(separator: "\n").filter { $0.contains(" on blocks ") }
        if reads.count != 1 { problems.append("blocks read \(reads.count) times") }
        if plan.contains("Seq Scan on blocks") || plan.contains("blocks_blocked_idx") { problems.append("blocks read past the reader's own") }
        if plan.contains("Anti Join") { problems.append("an anti join") }
        let thrownAway = PlanBudget.postsThrownAway(plan)
        if thrownAway.rows > thrownAway.bound { problems.append("\(thrownAway.rows) rows thrown away (at most \(thrownAway.bound))") }
        return problems
    }

    @Test("every list shape × sort × member/moderator, and a search: the reader's blocks read once by key and their authors left out, beside an account holding 20,000 blocks")
    func blockPlans() async throws {
        let failures: [String] = try await TestDatabase.isolated(named: "block") { database in try await TestDatabase.inRolledBackTransaction(on: database, timeout: "120s") { connection in
            let reader = try connection.query("INSERT INTO accounts (display_name) VALUES ('block-reader') RETURNING id")[0].decode(Int.self, "id")
            let others = try connection.query("INSERT INTO accounts (display_name) SELECT 'block-other ' || i FROM generate_series(1, 20001) AS i RETURNING id")
                .map { try $0.decode(Int.self, "id") }
            let collector = others[0], authors = Array(others[1...30]), blocked = Set(authors.prefix(3))
            try connection.execute(
                "INSERT INTO blocks (blocker_id, blocked_id) SELECT \(collector), id FROM accounts WHERE display_name LIKE 'block-other %' AND id <> \(collector)"
            )
            try connection.execute("INSERT INTO blocks (blocker_id, blocked_id) SELECT \(reader), unnest(\(blocked.map(String.init))::bigint[])")
            // 6,000 posts of the thirty authors, every shape and band, in their own id block above the sequence (the
            // search's windows start at the newest post); every post holds 붕어빵.
            let base = try connection.query("SELECT last_value + 2000000000 AS base FROM posts_id_seq")[0].decode(Int.self, "base")
            try connection.execute(
                """
                INSERT INTO posts (id, author_id, region_id, weather_type, category, body, trusted_helpful_count, created_at,
                                   conditions_weather_type, conditions_feels_like, conditions_band, conditions_observed_at) OVERRIDING SYSTEM VALUE
                SELECT \(base) + i, (\(authors.map(String.init))::bigint[])[1 + i % 30], (ARRAY[\(ListPlanTests.seoul)::bigint, \(ListPlanTests.busan)::bigint])[1 + i % 2],
                       (ARRAY['clearSky','fewClouds','scatteredClouds','brokenClouds','showerRain','rain','thunderStorm','snow','mist'])[1 + i % 9],
                       (ARRAY['food','place','music','outfit','activity'])[1 + i % 5], '붕어빵 ' || i, i % 7, now() - make_interval(mins => i),
                       'rain', (ARRAY[30, 25, 21, 18, 14, 10, 6, 0])[1 + i % 8], (ARRAY['hot','warm','mild','cool','chilly','cold','veryCold','freezing'])[1 + i % 8], now()
                FROM generate_series(1, 6000) AS i
                """
            )
            try connection.execute("UPDATE posts SET status = 'hidden', hidden_reason = 'reports' WHERE id > \(base) AND (id - \(base)) % 7 = 3")
            try connection.execute("INSERT INTO post_search (post_id, text_doc) SELECT id, E'\\n' || body FROM posts WHERE id > \(base)")
            try TestDatabase.analyzeEveryRow(["accounts", "blocks", "posts", "post_search"], on: connection)

            var failures: [String] = []
            func check(_ name: String, _ statement: SQLQuery) throws {
                var problems = Self.blockReads(try ListPlanTests.genericPlan(statement, connection: connection))
                let shown = try PostgresPostStore.posts(connection.query(statement)).map(\.authorID)
                if shown.contains(where: blocked.contains) { problems.append("a blocked author's post listed") }
                if !problems.isEmpty { failures.append("\(name): \(problems.joined(separator: ", "))\n\(try ListPlanTests.genericPlan(statement, connection: connection))") }
            }
            let readers = [("member", Viewer(accountID: reader, isModerator: false)), ("moderator", Viewer(accountID: reader, isModerator: true))]
            for (readerName, viewer) in readers {
                for (base, _) in RankedPlanTests.cases {
                    for sort in [PostSort.new, .hot, .top, .fit] {
                        // An unblocked author's list, and a blocked one's (empty without reading the author's posts).
                        for author in base.authorID == nil ? [nil] : [authors[4], authors[0]] {
                            var query = base
                            query.authorID = author
                            query.limit = 21
                            query.sort = sort
                            query.fitBand = .mild
                            let name = "\(readerName) \(sort) \(query)"
                            if sort == .fit {
                                for group in PostSort.FitGroup.allCases {
                                    try check(
                                        "\(name) \(group)",
                                        PostgresPostStore.withMedia(PostgresPostStore.fitGroupQuery(group, outside: .mild, query, viewer: viewer), viewer: reader, sort: .fit)
                                    )
                                }
                            } else {
                                try check(name, PostgresPostStore.withMedia(PostgresPostStore.listQuery(query, viewer: viewer), viewer: reader, sort: sort))
                            }
                        }
                    }
                }
                var search = PostQuery(limit: 21)
                search.sort = .new
                try check(
                    "\(readerName) search",
                    PostgresPostStore.withMedia(PostgresPostStore.windowedPage(search, search: try SearchTerms(parsing: "붕어빵"), viewer: viewer), viewer: reader)
                )
            }
            return failures
        } }
        #expect(failures.isEmpty, "\(failures.count) plans:\n\(failures.prefix(4).joined(separator: "\n\n"))")
    }
}
