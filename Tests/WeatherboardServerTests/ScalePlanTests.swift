@testable import Board
import Database
import Hashing
import Foundation
import Testing
import Vocabulary

/// Every list statement at 1M posts, planned the way the server plans it (a generic plan, `LIMIT $n`) under
/// PostgreSQL's default settings (`jit = on`, `jit_above_cost = 100000`): no JIT, no whole-table scan, no hash of a
/// whole table, and a page reads about a page of rows. At 1M posts the unfiltered list once planned a parallel
/// sequential scan with hash joins and JIT: 5 s under load for a page that an index walk reads in 0.3 ms.
///
/// The million rows live in a schema of their own (`posts` and `media` copied with their indexes, found first
/// on the search path), inside one transaction that is rolled back: other tests never see them, and the shared
/// tables' statistics stay as they are.
@Suite("Plans at 1M posts")
struct ScalePlanTests {
    static let posts = 1_000_000

    /// Every list shape: each filter and their combinations, a cursor, for each kind of reader.
    static func shapes(authors: [Int]) -> [(String, SQLQuery)] {
        let filters: [(String, PostQuery)] = [
            ("no filter", PostQuery()),
            ("weatherType", PostQuery(weatherType: .rain)),
            ("category", PostQuery(category: .food)),
            ("regionId", PostQuery(regionID: ListPlanTests.seoul)),
            ("authorId", PostQuery(authorID: authors[1])),
            ("weatherType+category", PostQuery(weatherType: .rain, category: .food)),
            ("weatherType+regionId", PostQuery(weatherType: .rain, regionID: ListPlanTests.seoul)),
            ("category+regionId", PostQuery(category: .food, regionID: ListPlanTests.seoul)),
            ("weatherType+category+regionId", PostQuery(weatherType: .rain, category: .food, regionID: ListPlanTests.seoul)),
            ("weatherType, second page", PostQuery(weatherType: .rain, before: posts / 2)),
            ("no filter, second page", PostQuery(before: posts / 2)),
        ]
        let readers: [(String, Viewer)] = [
            ("anonymous", .anonymous), ("member", Viewer(accountID: authors[2], isModerator: false)),
            ("moderator", Viewer(accountID: authors[3], isModerator: true)),
        ]
        var shapes: [(String, SQLQuery)] = []
        for (readerName, viewer) in readers {
            for (filterName, var query) in filters {
                query.limit = PageLimit.defaultValue + 1
                shapes.append(("\(readerName), \(filterName)", PostgresPostStore.withMedia(PostgresPostStore.listQuery(query, viewer: viewer))))
                // The ranked orders of the same shape; a second page resumes in the middle of the score range.
                for sort in [PostSort.top, .hot] {
                    var ranked = query
                    ranked.sort = sort
                    if ranked.before != nil {
                        ranked.before = nil
                        ranked.after = sort == .top ? .top(trustedMarks: 6, id: posts / 2) : .hot(score: Self.middleHotScore, id: posts / 2)
                    }
                    shapes.append((
                        "\(readerName), \(filterName), sort=\(sort)",
                        PostgresPostStore.withMedia(PostgresPostStore.listQuery(ranked, viewer: viewer), viewer: viewer.accountID, sort: sort)
                    ))
                }
                // `fit`: the statement of the band outside (a tenth of the seeded posts) and of the posts without
                // conditions (a quarter), each as its own group's statement; a second page resumes in the band outside,
                // in the middle of its scores.
                var fit = query
                fit.sort = .fit
                fit.fitBand = .mild
                if fit.before != nil {
                    fit.before = nil
                    fit.after = .fit(band: .mild, group: .sameBand, score: Self.middleHotScore, id: posts / 2)
                }
                for group in [PostSort.FitGroup.sameBand, .noConditions] where fit.after == nil || group == .sameBand {
                    shapes.append((
                        "\(readerName), \(filterName), sort=fit, \(group)",
                        PostgresPostStore.withMedia(
                            PostgresPostStore.fitGroupQuery(group, outside: .mild, fit, viewer: viewer), viewer: viewer.accountID, sort: .fit
                        )
                    ))
                }
            }
        }
        // "My posts": the author of every tenth post, 100,000 of them.
        shapes.append(("my posts", PostgresPostStore.withMedia(PostgresPostStore.listOwnQuery(authorID: authors[0], before: nil, limit: 21))))
        shapes.append(("my posts, second page", PostgresPostStore.withMedia(PostgresPostStore.listOwnQuery(authorID: authors[0], before: posts / 2, limit: 21))))
        shapes.append(("one post", PostgresPostStore.byID(posts / 2)))
        return shapes
    }

    /// Every filter in `new`, `top` and `hot` for a member known only by the token of `tokenHash`: the statement the
    /// list sends with the session check inside (`SessionGate.gated`).
    static func gatedShapes(tokenHash: String, store: any AccountStore) -> [(String, SQLQuery)] {
        let gate = SessionGate(tokenHash: tokenHash, store: store, counts: SessionCheckCounts())
        let viewer = Viewer(gate: gate)
        var shapes: [(String, SQLQuery)] = []
        for (filterName, base) in [
            ("no filter", PostQuery()), ("weatherType", PostQuery(weatherType: .rain)), ("regionId", PostQuery(regionID: ListPlanTests.seoul)),
            ("weatherType+category+regionId", PostQuery(weatherType: .rain, category: .food, regionID: ListPlanTests.seoul)),
            ("no filter, second page", PostQuery(before: posts / 2)),
        ] {
            for sort in [PostSort.new, .top, .hot] where sort == .new || base.before == nil {
                var query = base
                query.limit = PageLimit.defaultValue + 1
                query.sort = sort
                let read = PostgresPostStore.withMedia(PostgresPostStore.listQuery(query, viewer: viewer), viewer: Visibility(viewer).account, sort: sort)
                shapes.append(("token-checked member, \(filterName), sort=\(sort)", SessionGate.gated(read, tokenHash: tokenHash)))
            }
        }
        return shapes
    }

    /// A `hot` score among the seeded posts' (created over the last ~1,000 hours, up to 12 trusted marks).
    static let middleHotScore = Date().addingTimeInterval(-500 * 3600).timeIntervalSince1970 / 45000 + 0.5

    @Test("every list shape at 1M posts plans an index walk of about a page, without JIT, under PostgreSQL's defaults")
    func plansAtScale() async throws {
        let failures: [String] = try await TestDatabase.isolated(named: "scale") { database in try await TestDatabase.inRolledBackTransaction(on: database, timeout: "600s", defaultJIT: true) { connection in
            let authors = try Self.seed(connection)

            var failures: [String] = []
            // The member and the moderator block the author of `authorId` lists: such a page is empty, and must be so
            // without reading that author's 900 posts one by one.
            try connection.execute(
                "INSERT INTO blocks (blocker_id, blocked_id) VALUES (\(authors[2]), \(authors[1])), (\(authors[3]), \(authors[1]))"
            )
            for viewer in [Viewer(accountID: authors[2], isModerator: false), Viewer(accountID: authors[3], isModerator: true)] {
                let query = PostQuery(authorID: authors[1], limit: PageLimit.defaultValue + 1)
                let plan = try ListPlanTests.genericPlan(PostgresPostStore.withMedia(PostgresPostStore.listQuery(query, viewer: viewer)), connection: connection)
                let scans = plan.split(separator: "\n").filter { $0.contains(" on posts ") }
                if scans.isEmpty || !scans.allSatisfy({ $0.contains("(never executed)") || $0.contains("(actual rows=0 ") }) {
                    failures.append("a blocked author's list (moderator: \(viewer.isModerator)) reads their posts:\n\(plan)")
                }
            }
            try connection.execute("DELETE FROM blocks WHERE blocked_id = \(authors[1])")
            // A member known only by a token (issue #33): the same shapes inside the gated statement, the session check
            // its `me`, as `PostgresPostStore.list` sends them.
            let tokenHash = Digest.sha256Hex("scale plan session \(UUID().uuidString)")
            try connection.execute("INSERT INTO sessions (account_id, token_hash, token_prefix) VALUES (\(authors[2]), \(tokenHash), 'wb_scale')")
            try connection.simpleQuery("ANALYZE sessions")
            // The gate is only asked for its statements: its store (for a check of its own) is never called.
            let unused = TestDatabase.pool(size: 1)
            defer { unused.shutdown() }
            let gated = Self.gatedShapes(tokenHash: tokenHash, store: PostgresAccountStore(database: unused))
            for (name, query) in Self.shapes(authors: authors) + gated {
                let plan = try ListPlanTests.genericPlan(query, connection: connection)
                var problems: [String] = []
                if plan.contains("JIT:") { problems.append("JIT") }
                if plan.contains("Seq Scan on posts") || plan.contains("Seq Scan on media") { problems.append("a sequential scan of a big table") }
                if plan.contains("Hash Join") || plan.contains("Gather") { problems.append("a hash join or a parallel plan") }
                let thrownAway = PlanBudget.postsThrownAway(plan)
                if thrownAway.rows > thrownAway.bound { problems.append("\(thrownAway.rows) rows read and thrown away (at most \(thrownAway.bound))") }
                if name.hasPrefix("token-checked"),
                    !plan.split(separator: "\n").contains(where: { $0.contains(" on posts ") && !$0.contains("(never executed)") })
                {
                    problems.append("the gated read never ran: the session check found no session, so this plan proves nothing")
                }
                if RankedPlanTests.largestSort(plan) > 2 * 2 * (PageLimit.defaultValue + 1) {
                    problems.append("a sort of \(RankedPlanTests.largestSort(plan)) rows")
                }
                if !problems.isEmpty { failures.append("\(name): \(problems.joined(separator: ", "))\n\(plan)") }
            }
            return failures
        } }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
    }

    @Test("the server's sessions never JIT-compile")
    func sessionsHaveNoJIT() async throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        let jit = try await pool.query("SELECT current_setting('jit') AS jit")[0].decode(String.self, "jit")
        #expect(jit == "off")
    }

    /// 1M posts (1,000 new authors, the first writing every tenth; 9 weather types, 5 categories and 200 regions spread
    /// evenly; 1% hidden, 1% removed or deleted) and two images on every ninth, in copies of `posts` and `media`
    /// that shadow the real tables on this transaction's search path. Indexes are built after the rows: far faster.
    /// Returns the authors' ids.
    static func seed(_ connection: PostgresConnection) throws -> [Int] {
        let authors = try connection.query(
            "WITH a AS (INSERT INTO accounts (display_name) SELECT 'scale ' || i FROM generate_series(1, 1000) AS i RETURNING id) SELECT id FROM a ORDER BY id"
        ).map { try $0.decode(Int.self, "id") }
        let ids = authors.map(String.init)
        try connection.simpleQuery(
            """
            CREATE SCHEMA plan_scale;
            CREATE TABLE plan_scale.posts (LIKE public.posts INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY INCLUDING GENERATED);
            CREATE TABLE plan_scale.media (LIKE public.media INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY);
            SET LOCAL search_path = plan_scale, public;
            """
        )
        try connection.execute(
            """
            INSERT INTO plan_scale.posts (
                author_id, region_id, weather_type, category, title, body, status, hidden_reason, deleted_at, created_at, trusted_helpful_count,
                conditions_weather_type, conditions_feels_like, conditions_band, conditions_observed_at
            )
            SELECT CASE WHEN i % 10 = 0 THEN \(authors[0]) ELSE (\(ids)::int8[])[1 + i % 1000] END,
                   (SELECT array_agg(id) FROM (SELECT id FROM regions ORDER BY population DESC, id LIMIT 200) r)[1 + (i / 7) % 200],
                   (ARRAY['clearSky','fewClouds','scatteredClouds','brokenClouds','showerRain','rain','thunderStorm','snow','mist'])[1 + i % 9],
                   (ARRAY['food','place','music','outfit','activity'])[1 + (i / 9) % 5],
                   NULL, 'post ' || i,
                   CASE WHEN i % 100 = 17 THEN 'hidden' WHEN i % 200 = 33 THEN 'removed' ELSE 'visible' END,
                   CASE WHEN i % 100 = 17 THEN 'reports' END,
                   CASE WHEN i % 200 = 51 THEN now() END,
                   now() - make_interval(secs => (\(Self.posts) - i) * 3.6), (i * 7919) % 13,
                   CASE WHEN f.feels IS NOT NULL THEN 'rain' END, f.feels,
                   CASE WHEN f.feels >= 28 THEN 'hot' WHEN f.feels >= 23 THEN 'warm' WHEN f.feels >= 20 THEN 'mild' WHEN f.feels >= 17 THEN 'cool'
                        WHEN f.feels >= 12 THEN 'chilly' WHEN f.feels >= 9 THEN 'cold' WHEN f.feels >= 5 THEN 'veryCold' WHEN f.feels IS NOT NULL THEN 'freezing' END,
                   CASE WHEN f.feels IS NOT NULL THEN now() END
            FROM generate_series(1, \(Self.posts)) AS i
            -- Conditions on three posts in four, their feels-like spread over every band (as bench/sql/seed_scale.sql).
            CROSS JOIN LATERAL (SELECT CASE WHEN i % 4 <> 3 THEN (((i * 13) % 450) - 100) / 10.0 END::numeric(4,1) AS feels) f
            """
        )
        try connection.execute(
            """
            INSERT INTO plan_scale.media (owner_id, post_id, position, storage_key, width, height, byte_size, preview_byte_size, blurhash)
            SELECT p.author_id, p.id, k, md5(p.id::text || '-' || k), 2048, 1536, 1, 1, 'LEHV6nWB2yk8pyo0adR*.7kCMdnj'
            FROM plan_scale.posts p CROSS JOIN generate_series(0, 1) AS k WHERE p.weather_type = 'mist'
            """
        )
        // The real tables' indexes, primary keys included, on the copies.
        let definitions = try connection.query(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename IN ('posts', 'media') ORDER BY indexname"
        ).map { try $0.decode(String.self, "indexdef") }
        for definition in definitions {
            // Test-only DDL from the catalog, not input.
            let copy = definition.replacingOccurrences(of: " ON public.", with: " ON plan_scale.")
                .replacingOccurrences(of: "CREATE UNIQUE INDEX ", with: "CREATE UNIQUE INDEX scale_")
                .replacingOccurrences(of: "CREATE INDEX ", with: "CREATE INDEX scale_")
            try connection.simpleQuery(copy)
        }
        try connection.simpleQuery("ANALYZE plan_scale.posts; ANALYZE plan_scale.media")
        return authors
    }
}
