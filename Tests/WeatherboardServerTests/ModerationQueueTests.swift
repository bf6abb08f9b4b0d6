import CurlClient
import Database
import Foundation
import Testing
import Vocabulary

/// The moderation queue (`moderation_queue`, sql/0019) stays exact under concurrent reports, decisions, account
/// deletions and post deletions: the queue walked with its cursors lists exactly the posts with open reports,
/// each once, by first open report, with their open reports.
@Suite("Moderation queue")
struct ModerationQueueTests {
    /// One statement, one snapshot: the queue table against the open reports it stands for, across the whole
    /// database (other suites' reports and decisions included). The triggers commit with the reports they follow.
    /// A queue row is a target: a post, or a reply on it (sql/0026), keyed by `COALESCE(reply_id, 0)` beside the post.
    static let drift: SQLQuery = """
        SELECT count(*) AS n FROM (SELECT *, COALESCE(reply_id, 0) AS target FROM moderation_queue) q
        FULL JOIN (
            SELECT post_id, COALESCE(reply_id, 0) AS target, min(id) AS first_id, min(created_at) AS first_at
            FROM reports WHERE status = 'open' GROUP BY post_id, COALESCE(reply_id, 0)
        ) o USING (post_id, target)
        WHERE q.first_report_id IS DISTINCT FROM o.first_id OR q.first_reported_at IS DISTINCT FROM o.first_at
        """

    struct Truth: Equatable, CustomStringConvertible {
        var postID: String
        var reportIDs: [String]
        var firstReportedAt: String
        var description: String { "post \(postID): reports \(reportIDs) since \(firstReportedAt)" }
    }

    /// The open reports of these posts, grouped by post in first-open-report order, from the reports themselves.
    static func truth(_ posts: [String], database: PostgresPool) async throws -> [Truth] {
        try await database.query(
            """
            SELECT post_id, array_agg(id ORDER BY id)::text AS ids, min(created_at) AS first_at FROM reports
            WHERE status = 'open' AND reply_id IS NULL AND post_id = ANY(\(posts)::int8[]) GROUP BY post_id ORDER BY min(id)
            """
        ).map { row in
            let ids = try row.decode(String.self, "ids").dropFirst().dropLast().split(separator: ",").map(String.init)
            return Truth(
                postID: String(try row.decode(Int.self, "post_id")), reportIDs: ids,
                firstReportedAt: RFC3339.format(try row.decode(Date.self, "first_at"))
            )
        }
    }

    /// Walks the whole queue with its cursors, `limit` at a time. Every post must appear once and the pages must
    /// come in first-open-report order (each item's first listed report); returns the items of these posts.
    static func walk(_ server: TestServer, _ moderator: TestAccount, limit: Int, keeping posts: Set<String>) async throws -> [Truth] {
        var cursor: String?
        var seen: Set<String> = []
        var previousFirst = 0
        var kept: [Truth] = []
        repeat {
            let page = try await server.json("GET", "/v1/moderation/queue?limit=\(limit)" + (cursor.map { "&cursor=\($0)" } ?? ""), token: moderator.token)
            try #require(page.status == 200, "queue answered \(page.status): \(page.text)")
            for item in page.items {
                // Other suites' replies share the queue (CONTRACT §13): each target once, in the queue's one order.
                // Another suite's target may leave the queue and come back (a decision, then a new report) between two
                // pages: a new first report, so a new place in the queue. Only this test's targets are settled.
                if item["target"] as? String == "reply" { continue }
                let post = try #require(item["post"] as? [String: Any])
                let postID = try #require(post["id"] as? String)
                let reports = try #require(item["reports"] as? [[String: Any]])
                let ids = reports.compactMap { $0["id"] as? String }
                #expect(item["openReportCount"] as? Int == ids.count)
                // Posts outside this test may lose their reports between our statements; ours are settled.
                if posts.contains(postID) {
                    #expect(seen.insert(postID).inserted, "post \(postID) listed twice")
                    let first = try #require(ids.first.flatMap { Int($0) }, "post \(postID) is listed without open reports")
                    #expect(first > previousFirst, "post \(postID) out of order")
                    previousFirst = first
                    kept.append(Truth(postID: postID, reportIDs: ids, firstReportedAt: try #require(item["firstReportedAt"] as? String)))
                }
            }
            cursor = page.object["nextCursor"] as? String
        } while cursor != nil
        return kept
    }

    /// Bursts of reports on a few posts, from fresh reporters, while moderators resolve those posts over and over.
    /// Afterwards the queue holds exactly the posts left with open reports. The reporters and the decisions are
    /// interleaved by the server's own concurrency (each request is its own transaction under READ COMMITTED).
    @Test func parallelReportsAndDecisionsLeaveTheQueueExact() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let database = server.dependencies.database
            let author = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            var posts: [String] = []
            for i in 0..<5 {
                posts.append(try #require(try await server.createPost(author, body: "queue burst \(i)")["id"] as? String))
            }
            for round in 0..<3 {
                var reporters: [TestAccount] = []
                for _ in 0..<8 { reporters.append(try await server.anonymousAccount()) }
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for reporter in reporters {
                        for post in posts {
                            group.addTask {
                                try await server.json("POST", "/v1/posts/\(post)/reports", token: reporter.token, ["reason": "spam"]).status
                            }
                        }
                    }
                    // The first three posts are decided during the burst, more than once; the last two never.
                    for post in posts.prefix(3) {
                        for action in ["dismiss", "restore"] {
                            group.addTask {
                                try await server.json("POST", "/v1/moderation/posts/\(post)/decision", token: moderator.token, ["action": action]).status
                            }
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == 200 || $0 == 201 }, "\(statuses)")
                #expect(try await database.count(Self.drift) == 0, "round \(round)")
            }
            // One post is left resolved for sure: it must be gone from the queue.
            #expect(try await server.json("POST", "/v1/moderation/posts/\(posts[0])/decision", token: moderator.token, ["action": "dismiss"]).status == 200)

            let expected = try await Self.truth(posts, database: database)
            #expect(!expected.contains { $0.postID == posts[0] })
            #expect(expected.contains { $0.postID == posts[4] && $0.reportIDs.count == 24 })
            for limit in [1, 7, 100] {
                #expect(try await Self.walk(server, moderator, limit: limit, keeping: Set(posts)) == expected, "limit \(limit)")
            }
            #expect(try await database.count(Self.drift) == 0)
        }
    }

    /// A reporter deleting their account keeps their open reports in the queue; an author
    /// deleting theirs keeps the reported post as evidence; a post deleted outright (an operator's purge, the
    /// cascade to its reports) leaves the queue; a report deleted outright moves its post to its next open report.
    @Test func deletionsLeaveTheQueueExact() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let database = server.dependencies.database
            let author = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let reporters = [try await server.anonymousAccount(), try await server.anonymousAccount()]
            var posts: [String] = []
            for i in 0..<3 {
                posts.append(try #require(try await server.createPost(author, body: "queue deletions \(i)")["id"] as? String))
            }
            for post in posts {
                for reporter in reporters {
                    #expect(try await server.json("POST", "/v1/posts/\(post)/reports", token: reporter.token, ["reason": "abuse"]).status == 201)
                }
            }
            // The first reporter goes: their reports stay open.
            #expect(try await server.json("DELETE", "/v1/accounts/me", token: reporters[0].token).status == 204)
            #expect(try await Self.walk(server, moderator, limit: 50, keeping: Set(posts)) == (try await Self.truth(posts, database: database)))
            #expect(try await database.count("SELECT count(*) AS n FROM reports WHERE reporter_id = \(Int(reporters[0].id)!) AND status = 'open'") == 3)

            // The author goes: the reported posts stay as evidence, still queued.
            #expect(try await server.json("DELETE", "/v1/accounts/me", token: author.token).status == 204)
            let afterAuthor = try await Self.walk(server, moderator, limit: 50, keeping: Set(posts))
            #expect(afterAuthor.map(\.postID) == posts)
            #expect(afterAuthor == (try await Self.truth(posts, database: database)))

            // The first post's reports are resolved: it leaves the queue.
            #expect(try await server.json("POST", "/v1/moderation/posts/\(posts[0])/decision", token: moderator.token, ["action": "remove"]).status == 200)

            // An operator deletes the second post outright: its reports go with it, and so does its queue row.
            try await database.execute("DELETE FROM posts WHERE id = \(Int(posts[1])!)")
            let remaining = try await Self.walk(server, moderator, limit: 1, keeping: Set(posts))
            #expect(remaining.map(\.postID) == [posts[2]])
            #expect(remaining == (try await Self.truth(posts, database: database)))

            // An operator deletes the third post's first report: the post is queued by its next one.
            try await database.execute("DELETE FROM reports WHERE id = \(Int(remaining[0].reportIDs[0])!)")
            let rest = try await Self.walk(server, moderator, limit: 1, keeping: Set(posts))
            #expect(rest.map(\.reportIDs) == [Array(remaining[0].reportIDs.dropFirst())])
            #expect(rest == (try await Self.truth(posts, database: database)))
            #expect(try await database.count(Self.drift) == 0)
        }
    }

    /// A statement that resolves some of a post's reports, while a report older than the rest (its `created_at` earlier)
    /// is still in flight, must end with that report's time as the post's `firstReportedAt` once it commits. Driven by
    /// hand on two connections so the interleaving is certain: the report's transaction holds the triggers' lock on the
    /// post; the resolving statement waits for it and then reads the report. Without the lock the resolving statement
    /// recomputed the row from a snapshot without the report, waited on the row, and wrote it back over the report's
    /// earlier time. (The server's own paths also lock the post first; operators' SQL does not.)
    @Test func resolvingWhileAReportIsInFlightKeepsTheRowExact() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let database = server.dependencies.database
            let author = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author, body: "queue race")["id"] as? String)
            let post = Int(postID)!
            for reason in ["spam", "abuse"] {
                let reporter = try await server.anonymousAccount()
                #expect(try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporter.token, ["reason": reason]).status == 201)
            }

            // The report in flight, older than the others, held open until the resolving statement waits on it.
            let report = try await GatedTransaction.start(
                [
                    """
                    INSERT INTO reports (post_id, reason, reported_body, created_at)
                    VALUES (\(post), 'filter', 'in flight', now() - interval '1 hour')
                    """
                ],
                on: database
            )
            let resolved = Task {
                try await database.execute(
                    "UPDATE reports SET status = 'dismissed', resolved_at = now() WHERE post_id = \(post) AND status = 'open' AND reason = 'spam'"
                )
            }
            let waited = try await waitForLockWaiter("UPDATE reports SET status = 'dismissed'%AND reason = 'spam'", behind: report)
            try await report.open()
            #expect(try await resolved.value == 1)
            #expect(waited)
            let inFlight = try await database.query("SELECT created_at FROM reports WHERE post_id = \(post) AND reason = 'filter'")[0]
                .decode(Date.self, "created_at")
            let row = try await database.query("SELECT first_reported_at FROM moderation_queue WHERE post_id = \(post)")
            #expect(try row.first?.decode(Date.self, "first_reported_at") == inFlight)
            #expect(try await database.count(Self.drift) == 0)
        }
    }
}
