@testable import Board
import Database
import Foundation
import Testing

/// Every list the API serves must read its rows in order from an index, however the table is mixed.
/// The data here is deliberately skewed: the newest 30,000 posts are all one weather type, category,
/// region and author, and every list asks for something else. A plan that walks the primary key
/// backwards and filters would read all 30,000 before finding a page; the plans must not.
@Suite("List plans")
struct ListPlanTests {
    /// The index that must drive each filter combination (anonymous viewer). Without filters the
    /// primary key is as good: every post read is one to show.
    static let cases: [(PostQuery, String)] = [
        (PostQuery(), "posts_public_idx"),
        (PostQuery(weatherType: .snow), "posts_public_weather_idx"),
        (PostQuery(category: .food), "posts_public_category_idx"),
        (PostQuery(regionID: seoul), "posts_public_region_idx"),
        (PostQuery(authorID: 0), "posts_author_idx"),
        (PostQuery(weatherType: .snow, category: .food), "posts_public_wc_idx"),
        (PostQuery(weatherType: .snow, regionID: seoul), "posts_public_rw_idx"),
        (PostQuery(category: .food, regionID: seoul), "posts_public_region_idx"),
        (PostQuery(weatherType: .snow, category: .food, regionID: seoul), "posts_public_rw_idx"),
        (PostQuery(weatherType: .snow, before: 1_000_000_000), "posts_public_weather_idx"),
    ]
    static let seoul = 1835848
    static let busan = 1838524

    @Test("each filter combination walks its own index in order, even when the newest posts all differ from the filter")
    func skewedPlans() async throws {
        let failures: [String] = try await TestDatabase.isolated(named: "list") { database in try await TestDatabase.inRolledBackTransaction(on: database, timeout: "120s") { connection in
            let authors = try connection.query("INSERT INTO accounts (display_name) VALUES ('plan-old'), ('plan-bulk') RETURNING id")
            let old = try authors[0].decode(Int.self, "id"), bulk = try authors[1].decode(Int.self, "id")
            try connection.execute(
                """
                INSERT INTO posts (author_id, region_id, weather_type, category, body)
                SELECT \(old), (ARRAY[\(Self.seoul)::bigint, \(Self.busan)::bigint])[1 + i % 2],
                       (ARRAY['clearSky','fewClouds','scatteredClouds','brokenClouds','showerRain','rain','thunderStorm','snow','mist'])[1 + i % 9],
                       (ARRAY['food','place','music','outfit','activity'])[1 + i % 5], 'old ' || i
                FROM generate_series(1, 3000) AS i
                """
            )
            try connection.execute(
                """
                INSERT INTO posts (author_id, region_id, weather_type, category, body)
                SELECT \(bulk), \(Self.busan), 'clearSky', 'music', 'new ' || i FROM generate_series(1, 30000) AS i
                """
            )
            // A spam wave hidden by moderation: the unlisted indexes hold thousands of another author's posts.
            try connection.execute("UPDATE posts SET status = 'hidden', hidden_reason = 'reports' WHERE author_id = \(bulk) AND id % 10 = 0")
            try TestDatabase.analyzeEveryRow(["posts"], on: connection)

            var failures: [String] = []
            for (var query, index) in Self.cases {
                if query.authorID != nil { query.authorID = old }
                query.limit = 21
                let plan = try Self.genericPlan(PostgresPostStore.listQuery(query, viewer: .anonymous), connection: connection)
                if plan.contains("Sort") || Self.overBudget(plan) || (query != PostQuery(limit: 21) && !plan.contains(index)) {
                    failures.append("\(query) should walk \(index):\n\(plan)")
                }
            }
            // A signed-in viewer: public posts minus blocked authors, merged with their own hidden ones.
            let signedIn = try Self.genericPlan(
                PostgresPostStore.listQuery(PostQuery(weatherType: .snow, limit: 21), viewer: Viewer(accountID: old, isModerator: false)),
                connection: connection
            )
            if !signedIn.contains("posts_public_weather_idx") || !signedIn.contains("posts_author_unlisted_idx") || Self.overBudget(signedIn) {
                failures.append("signed-in list:\n\(signedIn)")
            }
            // A moderator: public posts merged with every hidden and removed one, each through its own index.
            let moderator = try Self.genericPlan(
                PostgresPostStore.listQuery(PostQuery(weatherType: .snow, limit: 21), viewer: Viewer(accountID: old, isModerator: true)),
                connection: connection
            )
            if !moderator.contains("posts_public_weather_idx") || !moderator.contains("posts_unlisted_weather_idx") || Self.overBudget(moderator) {
                failures.append("moderator's list:\n\(moderator)")
            }
            let own = try Self.genericPlan(PostgresPostStore.listOwnQuery(authorID: old, before: nil, limit: 21), connection: connection)
            if own.contains("Sort") || !own.contains("posts_author_idx") || Self.overBudget(own) {
                failures.append("my posts:\n\(own)")
            }
            return failures
        } }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
    }

    /// More rows of `posts` thrown away than the plan's walks may (`PlanBudget.postsThrownAway`).
    static func overBudget(_ plan: String) -> Bool {
        let thrownAway = PlanBudget.postsThrownAway(plan)
        return thrownAway.rows > thrownAway.bound
    }

    /// The rows a plan read and threw away ("Rows Removed by Filter"), summed over its nodes.
    static func rowsSkipped(_ plan: String) -> Int {
        plan.split(separator: "\n").compactMap { line -> Int? in
            guard let range = line.range(of: "Rows Removed by Filter: ") else { return nil }
            return Int(line[range.upperBound...].trimmingCharacters(in: .whitespaces))
        }.reduce(0, +)
    }

    /// EXPLAIN ANALYZE of the statement's generic plan, the one the server's connections use
    /// (`plan_cache_mode = force_generic_plan`): PREPARE it with its parameter types, then EXPLAIN ANALYZE EXECUTE.
    static func genericPlan(_ query: SQLQuery, connection: PostgresConnection, buffers: Bool = false) throws -> String {
        let typeNames: [UInt32: String] = [
            PostgresType.int8: "int8", PostgresType.int4: "int4", PostgresType.text: "text", PostgresType.bool: "bool", PostgresType.float8: "float8",
            PostgresType.textArray: "text[]", PostgresType.timestamptz: "timestamptz",
        ]
        let types = query.binds.map { typeNames[$0.type] ?? "unknown" }
        // Test values only: quoted as literals for EXECUTE.
        let values = query.binds.map { $0.text.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" } ?? "NULL" }
        try connection.simpleQuery("SET plan_cache_mode = force_generic_plan")
        try connection.simpleQuery("PREPARE plan_probe(\(types.joined(separator: ", "))) AS \(query.sql)")
        defer { try? connection.simpleQuery("DEALLOCATE plan_probe") }
        return try connection.query(SQLQuery(unsafeSQL: "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF\(buffers ? ", BUFFERS" : "")) EXECUTE plan_probe(\(values.joined(separator: ", ")))"))
            .map { try $0.decode(String.self, at: 0) }.joined(separator: "\n")
    }
}
