@testable import Board
import Database
import Foundation
import Testing
import Vocabulary

/// The moderation queue in a spam wave: 200,000 open reports over 50,000 posts and one post with 20,000 more, the
/// queue's statements planned as the server plans them (a generic plan). A page must read about a page of rows:
/// no aggregate over the open reports, no sequential scan of `reports`. The queue once grouped every open report
/// on every request (197 pages/s at 17,641 open reports, linearly slower with more).
///
/// The rows live in copies of the tables in a schema of their own (found first on the search path), inside one
/// transaction that is rolled back: other tests never see them, and the shared tables' statistics stay as they are.
@Suite("Queue plans in a spam wave")
struct QueuePlanTests {
    static let posts = 50_000
    static let reportsPerPost = 4
    static let spamReports = 20_000
    static let limit = PageLimit.defaultValue + 1

    @Test("a queue page reads about a page of rows, first page, the spam post's page and a later page")
    func plansInASpamWave() async throws {
        let failures: [String] = try await TestDatabase.isolated(named: "queue") { database in try await TestDatabase.inRolledBackTransaction(on: database, timeout: "600s", defaultJIT: true) { connection in
            let (spam, postIDs) = try Self.seed(connection)
            let open = try connection.query("SELECT count(*) AS n FROM reports WHERE status = 'open'")[0].decode(Int.self, "n")
            guard open == Self.posts * Self.reportsPerPost + Self.spamReports else { return ["\(open) open reports"] }

            // The queue's order: the first half of the posts, the spam post, the second half.
            let order = Array(postIDs.prefix(Self.posts / 2)) + [spam] + Array(postIDs[(Self.posts / 2)...])
            let beforeSpam = try connection.query(
                "SELECT min(id) AS id FROM reports WHERE post_id = \(postIDs[Self.posts / 2 - 3]) AND status = 'open'"
            )[0].decode(Int.self, "id")
            let later = try connection.query(
                "SELECT min(id) AS id FROM reports WHERE post_id = \(postIDs[Self.posts * 9 / 10]) AND status = 'open'"
            )[0].decode(Int.self, "id")
            var failures: [String] = []
            for (name, after) in [("first page", nil), ("the spam post's page", beforeSpam), ("a later page", later)] as [(String, Int?)] {
                let query = PostgresModerationStore.queuePage(after: after, limit: Self.limit)
                let page = try connection.query(query).map { try $0.decode(Int.self, "post_id") }
                // Test data: the page is right before it is fast. (The spam post sits before the later page in `order`.)
                let start = after == nil ? 0 : after == beforeSpam ? Self.posts / 2 - 2 : Self.posts * 9 / 10 + 2
                if page != Array(order[start...].prefix(Self.limit)) { failures.append("\(name): posts \(page.prefix(5))…, expected from \(order[start])") }
                if after == beforeSpam, !page.contains(spam) { failures.append("\(name) misses the spam post") }

                let plan = try ListPlanTests.genericPlan(query, connection: connection)
                var problems: [String] = []
                if plan.contains("Aggregate") { problems.append("an aggregate") }
                if plan.contains("Seq Scan") { problems.append("a sequential scan") }
                if plan.contains("JIT:") { problems.append("JIT") }
                let read = Self.rowsRead(plan) + ListPlanTests.rowsSkipped(plan)
                if read > 2 * Self.limit { problems.append("\(read) rows read for a page of \(Self.limit)") }
                if !problems.isEmpty { failures.append("\(name), the page: \(problems.joined(separator: ", "))\n\(plan)") }

                // The page's open reports: each listed report is read once, and nothing else. A page holding the spam
                // post lists its 20,000 reports (the contract lists every open report of an item).
                let reportsQuery = PostgresModerationStore.openReports(postIDs: page.map(String.init))
                let listed = try connection.query(reportsQuery).count
                let reportsPlan = try ListPlanTests.genericPlan(reportsQuery, connection: connection)
                var reportProblems: [String] = []
                if reportsPlan.contains("Seq Scan") { reportProblems.append("a sequential scan") }
                if reportsPlan.contains("JIT:") { reportProblems.append("JIT") }
                let reportsRead = Self.rowsRead(reportsPlan) + ListPlanTests.rowsSkipped(reportsPlan)
                if reportsRead > listed + Self.limit { reportProblems.append("\(reportsRead) rows read for \(listed) reports") }
                if !reportProblems.isEmpty { failures.append("\(name), its reports: \(reportProblems.joined(separator: ", "))\n\(reportsPlan)") }
            }
            return failures
        } }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
    }

    /// The rows a plan's scans produced, every loop counted ("actual rows=N loops=M" on each scan node; a bitmap scan
    /// counted once, at its heap scan).
    static func rowsRead(_ plan: String) -> Int {
        plan.split(separator: "\n").filter { $0.contains("Scan") && !$0.contains("Bitmap Index Scan") }.compactMap { line -> Int? in
            guard let rows = line.range(of: "actual rows="), let loops = line.range(of: " loops=") else { return nil }
            let count = Int(line[rows.upperBound...].prefix { $0.isNumber }) ?? 0
            return count * (Int(line[loops.upperBound...].prefix { $0.isNumber }) ?? 1)
        }.reduce(0, +)
    }

    /// 50,000 posts, each with 4 open reports whose first ones come in post order, and a spam post with 20,000 whose
    /// first comes after the first half of the posts' first ones, in copies of `reports` and `moderation_queue` that
    /// shadow the real tables on this transaction's search path (the queue filled as sql/0019 backfills it). Returns
    /// the spam post and the others, by id.
    static func seed(_ connection: PostgresConnection) throws -> (spam: Int, posts: [Int]) {
        try connection.simpleQuery(
            """
            CREATE SCHEMA plan_queue;
            CREATE TABLE plan_queue.reports (LIKE public.reports INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING IDENTITY);
            CREATE TABLE plan_queue.moderation_queue (LIKE public.moderation_queue INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
            SET LOCAL search_path = plan_queue, public;
            """
        )
        let posts = Array(1...Self.posts), spam = Self.posts + 1, half = Self.posts / 2
        let report = "INSERT INTO plan_queue.reports (post_id, reason, reported_body) SELECT p, 'spam', 'spam wave' FROM"
        // The first report of the first half of the posts, then the spam post's, then everything else.
        try connection.execute("\(raw: report) generate_series(1, \(half)) AS p ORDER BY p")
        try connection.execute("\(raw: report) (SELECT \(spam) AS p FROM generate_series(1, \(Self.spamReports))) s")
        try connection.execute("\(raw: report) generate_series(\(half + 1), \(Self.posts)) AS p ORDER BY p")
        try connection.execute(
            "\(raw: report) (SELECT p FROM generate_series(2, \(Self.reportsPerPost)) AS k, generate_series(1, \(Self.posts)) AS p ORDER BY k, p) s"
        )
        // The real tables' indexes, primary keys included, on the copies.
        let definitions = try connection.query(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename IN ('reports', 'moderation_queue') ORDER BY indexname"
        ).map { try $0.decode(String.self, "indexdef") }
        for definition in definitions {
            // Test-only DDL from the catalog, not input.
            let copy = definition.replacingOccurrences(of: " ON public.", with: " ON plan_queue.")
                .replacingOccurrences(of: "CREATE UNIQUE INDEX ", with: "CREATE UNIQUE INDEX queue_")
                .replacingOccurrences(of: "CREATE INDEX ", with: "CREATE INDEX queue_")
            try connection.simpleQuery(copy)
        }
        try connection.execute(
            """
            INSERT INTO plan_queue.moderation_queue (post_id, first_report_id, first_reported_at)
            SELECT post_id, min(id), min(created_at) FROM plan_queue.reports WHERE status = 'open' GROUP BY post_id
            """
        )
        try TestDatabase.analyzeEveryRow(["plan_queue.reports", "plan_queue.moderation_queue"], on: connection)
        return (spam, posts)
    }
}
