@testable import Board
import Database
import Foundation
import Testing
import Vocabulary

/// The search statements (`PostgresPostStore+Search.swift`) planned the way the server plans them (generic plans,
/// PostgreSQL's default JIT settings) over 40,000 posts: every window is one lookup of the search index, never a scan
/// of a whole table and never JIT; a common term's page is found in the first window (a page of candidates, not every
/// match); a rare term's windows read only its own matches; the ranked orders' conditions probe by key.
@Suite("Search plans")
struct SearchPlanTests {
    static let posts = 40_000

    /// Rows that went through a node named `node` (the sum of its `actual rows × loops` lines).
    static func rows(through node: String, in plan: String) -> Int {
        plan.split(separator: "\n").filter { $0.contains(node) }.compactMap { line -> Int? in
            guard let range = line.range(of: "rows=") else { return nil }
            let rows = Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 0
            let loops = line.range(of: "loops=").flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) } ?? 1
            return rows * loops
        }.reduce(0, +)
    }

    @Test("each window is one search-index lookup, a common term's page needs one, a rare term's windows read only its matches; no JIT, no whole-table scan")
    func windowedPlans() async throws {
        let failures: [String] = try await TestDatabase.isolated(named: "search") { database in try await TestDatabase.inRolledBackTransaction(on: database, timeout: "300s", defaultJIT: true) { connection in
            let author = try connection.query("INSERT INTO accounts (display_name) VALUES ('search-plan') RETURNING id")[0].decode(Int.self, "id")
            // The posts' ids are a block of their own, a billion above the sequence (the windows start at the newest post).
            let base = try connection.query("SELECT last_value + 1000000000 AS base FROM posts_id_seq")[0].decode(Int.self, "base")
            // Every tenth post holds 붕어빵 (a common term), every 8,000th 을밀대 (a rare one); each holds filler words.
            try connection.execute(
                """
                INSERT INTO posts (id, author_id, region_id, weather_type, category, body) OVERRIDING SYSTEM VALUE
                SELECT \(base) + i, \(author), \(ListPlanTests.seoul), (ARRAY['rain','snow','mist'])[1 + i % 3], (ARRAY['food','place'])[1 + i % 2],
                       CASE WHEN i % 10 = 0 THEN '붕어빵 ' ELSE '' END || CASE WHEN i % 8000 = 7 THEN '을밀대 냉면 ' ELSE '' END
                       || '오늘 날씨 산책 ' || (i % 977) || ' 카페 노래'
                FROM generate_series(1, \(Self.posts)) AS i
                """
            )
            try connection.execute(
                """
                INSERT INTO post_search (post_id, text_doc)
                SELECT id, E'\\n' || body FROM posts WHERE author_id = \(author)
                """
            )
            try TestDatabase.analyzeEveryRow(["posts", "post_search"], on: connection)
            let readers: [(String, Viewer)] = [
                ("anonymous", .anonymous), ("member", Viewer(accountID: author, isModerator: false)), ("moderator", Viewer(accountID: author, isModerator: true)),
            ]
            let filters: [(String, PostQuery)] = [
                ("no filter", PostQuery()), ("weatherType", PostQuery(weatherType: .rain)), ("regionId", PostQuery(regionID: ListPlanTests.seoul)),
                ("weatherType+category", PostQuery(weatherType: .rain, category: .food)), ("second page", PostQuery(before: 30_000_000_000)),
            ]
            var failures: [String] = []
            for (readerName, viewer) in readers {
                for (filterName, var query) in filters {
                    query.limit = PageLimit.defaultValue + 1
                    for (termName, q) in [("common", "붕어빵"), ("rare", "을밀대"), ("two terms", "붕어빵 산책"), ("one character", "빵")] {
                        let search = try SearchTerms(parsing: q)
                        let plan = try ListPlanTests.genericPlan(
                            PostgresPostStore.withMedia(PostgresPostStore.windowedPage(query, search: search, viewer: viewer), viewer: viewer.accountID),
                            connection: connection
                        )
                        let name = "\(readerName), \(filterName), \(termName)"
                        if plan.contains("JIT") || plan.contains("Seq Scan on posts") || plan.contains("Seq Scan on post_search") {
                            failures.append("\(name): JIT or a whole-table scan:\n\(plan)")
                        }
                        // The page's posts by their keys: a hash join scanned every post, a merge join walked the primary
                        // key down from the newest post to the oldest match.
                        if plan.contains("Hash Join") || plan.contains("Merge Join") { failures.append("\(name): the page's posts joined in bulk:\n\(plan)") }
                        if !plan.contains("post_search_keys_idx") { failures.append("\(name): no search index:\n\(plan)") }
                        // A page of a common term: the first window's candidates (about 100 of its 1,024 ids), not the
                        // 4,000 matches of the whole table.
                        let candidates = Self.rows(through: "Bitmap Heap Scan on post_search", in: plan)
                        if termName != "rare" && candidates > 1_000 { failures.append("\(name): \(candidates) candidates read for a page:\n\(plan)") }
                        if termName == "rare" && candidates > 20 { failures.append("\(name): \(candidates) candidates for 5 matches:\n\(plan)") }
                    }
                }
            }
            // The ranked orders' two conditions: the candidates' ids, and a check of each walked post by key.
            for condition in [" AND p.id = ANY(\(["1", "2"])::bigint[])" as SQLQuery, PostgresPostStore.documentCondition(try SearchTerms(parsing: "붕어빵"))] {
                var query = PostQuery(weatherType: .rain, limit: 21)
                query.sort = .hot
                let plan = try ListPlanTests.genericPlan(
                    PostgresPostStore.withMedia(PostgresPostStore.listQuery(query, viewer: .anonymous, conditions: [condition]), sort: .hot),
                    connection: connection
                )
                if plan.contains("JIT") || plan.contains("Seq Scan on post") { failures.append("ranked, \(condition.sql):\n\(plan)") }
            }
            return failures
        } }
        #expect(failures.isEmpty, "\(failures.count) plans:\n\(failures.joined(separator: "\n\n"))")
    }
}
