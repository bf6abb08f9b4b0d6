import Board
import CurlClient
import Database
import Foundation
import RateLimit
import Testing
import Vocabulary
import WeatherboardServer

/// Issue #19 point 6, over HTTP against the real PostgreSQL: a moderator's delete and its log entry are one
/// statement; stored values the code does not know fail the request like posts' do (a logged 500
/// `internal_error`) instead of reaching the wire; a login the database failed keeps no failed-login hit.
@Suite struct ModerationIntegrityTests {
    /// The log insert is made to fail (a trigger on this post's entry alone): the delete must not stay either.
    /// Before the fix: the delete committed in its own statement, the answer was 500, and the post stayed deleted
    /// with no log entry.
    @Test func aModeratorDeleteAndItsLogEntryCommitTogether() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let database = server.dependencies.database
            let author = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let suffix = "\(UInt32.random(in: 0...UInt32.max))"
            let function = "test_refuse_log_\(suffix)", trigger = "test_refuse_log_\(suffix)"
            try await database.execute(
                """
                CREATE FUNCTION \(raw: function)() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN RAISE EXCEPTION 'test: the log refuses this entry'; END $$
                """
            )
            try await database.execute(
                """
                CREATE TRIGGER \(raw: trigger) BEFORE INSERT ON moderation_log FOR EACH ROW
                WHEN (NEW.target_id = '\(raw: String(Int(postID)!))') EXECUTE FUNCTION \(raw: function)()
                """
            )
            let failed: Int
            do {
                failed = try await server.json("DELETE", "/v1/posts/\(postID)", token: moderator.token).status
            } catch {
                try await database.execute("DROP TRIGGER \(raw: trigger) ON moderation_log")
                try await database.execute("DROP FUNCTION \(raw: function)()")
                throw error
            }
            try await database.execute("DROP TRIGGER \(raw: trigger) ON moderation_log")
            try await database.execute("DROP FUNCTION \(raw: function)()")
            #expect(failed >= 500)
            let deleted = "SELECT count(*) AS n FROM posts WHERE id = \(Int(postID)!) AND deleted_at IS NOT NULL" as SQLQuery
            let logged = "SELECT count(*) AS n FROM moderation_log WHERE target_type = 'post' AND target_id = \(postID) AND action = 'delete'" as SQLQuery
            #expect(try await database.count(deleted) == 0, "no log entry, no delete")
            #expect(try await database.count(logged) == 0)
            #expect(try await server.json("GET", "/v1/posts/\(postID)").status == 200)

            // With the log working: both, once, however often it is repeated.
            #expect(try await server.json("DELETE", "/v1/posts/\(postID)", token: moderator.token).status == 204)
            #expect(try await server.json("DELETE", "/v1/posts/\(postID)", token: moderator.token).status == 204)
            #expect(try await database.count(deleted) == 1)
            #expect(try await database.count(logged) == 1)
        }
    }

    /// Two moderators delete one post at once: one delete, one log entry. Before the fix: both requests saw it
    /// undeleted and both logged a delete.
    @Test func parallelModeratorDeletesLogOnce() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            var moderators: [TestAccount] = []
            for _ in 0..<6 {
                let moderator = try await server.anonymousAccount()
                try await server.grantRole("moderator", to: moderator)
                moderators.append(moderator)
            }
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for moderator in moderators {
                    group.addTask { try await server.json("DELETE", "/v1/posts/\(postID)", token: moderator.token).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 204, count: moderators.count))
            let logged = "SELECT count(*) AS n FROM moderation_log WHERE target_type = 'post' AND target_id = \(postID) AND action = 'delete'" as SQLQuery
            #expect(try await server.dependencies.database.count(logged) == 1)
        }
    }

    /// A revision whose category a later version no longer knows: posts answer 500 `internal_error` for an unknown
    /// stored value, and so does the decision that shows the revisions. Before the fix: 200 with `"category":
    /// "bogus"` on the wire.
    @Test func anUnknownRevisionValueIsNotServed() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: author.token, ["body": "고쳤어요"]).status == 200)
            let database = server.dependencies.database
            try await database.execute("UPDATE post_revisions SET category = 'bogus' WHERE post_id = \(Int(postID)!)")
            let decision = try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "dismiss"])
            #expect(decision.status == 500)
            #expect(decision.errorCode == "internal_error")
            #expect(!decision.text.contains("bogus"))

            try await database.execute("UPDATE post_revisions SET category = 'food', weather_type = 'drizzle' WHERE post_id = \(Int(postID)!)")
            let again = try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "dismiss"])
            #expect(again.status == 500)
            #expect(!again.text.contains("drizzle"))

            try await database.execute("UPDATE post_revisions SET weather_type = 'rain' WHERE post_id = \(Int(postID)!)")
            let known = try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "dismiss"])
            #expect(known.status == 200)
            let revisions = (known.object["post"] as? [String: Any])?["revisions"] as? [[String: Any]]
            #expect(revisions?.first?["category"] as? String == "food")
        }
    }

    /// A log line whose action the code does not know. The line gets an id below every real one (the log is read
    /// newest first, and only this test pages down to it) and lives only while this test reads it. Before the fix:
    /// 200 with `"action": "bogus"`.
    @Test func anUnknownLogActionIsNotServed() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let database = server.dependencies.database
            let id = -Int.random(in: 1...Int(Int32.max))
            let path = "/v1/moderation/log?limit=1&cursor=\(Cursor.encode(1))"
            try await database.execute(
                """
                INSERT INTO moderation_log (id, moderator_id, action, target_type, target_id)
                OVERRIDING SYSTEM VALUE VALUES (\(id), NULL, 'bogus', 'post', '1')
                """
            )
            let unknown = try await server.json("GET", path, token: moderator.token)
            try await database.execute("UPDATE moderation_log SET action = 'ban' WHERE id = \(id)")
            let known = try await server.json("GET", path, token: moderator.token)
            try await database.execute("DELETE FROM moderation_log WHERE id = \(id)")
            #expect(unknown.status == 500)
            #expect(unknown.errorCode == "internal_error")
            #expect(!unknown.text.contains("bogus"))
            #expect(known.status == 200)
            #expect(known.items.first?["action"] as? String == "ban")
        }
    }

    /// A report whose reason a later version added (the CHECK constraint widened, then the code rolled back), read
    /// by its reporter. Before the fix: 200 with `"reason": "bogus"`. Only this reporter's page shows the report.
    @Test func anUnknownReportReasonIsNotServed() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let reporter = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            #expect(try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporter.token, ["reason": "spam"]).status == 201)
            let database = server.dependencies.database
            let reasons = "'spam', 'abuse', 'hate', 'sexual', 'misinformation', 'other', 'filter'"
            // Each schema change waits at most 100 ms for the table, then tries again, and scans nothing while it holds
            // it (NOT VALID; the check is validated afterwards under a lock that lets inserts and updates through), so
            // the other tests' statements on reports never queue behind it for long.
            let widen: [SQLQuery] = [
                "SET LOCAL lock_timeout = '100ms'",
                "ALTER TABLE reports DROP CONSTRAINT reports_reason_check",
                "ALTER TABLE reports ADD CONSTRAINT reports_reason_check CHECK (reason IN (\(raw: reasons), 'bogus')) NOT VALID",
                // Resolved first: an open report would put the unknown reason in every moderator's queue.
                "UPDATE reports SET reason = 'bogus', status = 'dismissed', resolved_at = now() WHERE post_id = \(Int(postID)!)",
            ]
            let restore: [SQLQuery] = [
                "SET LOCAL lock_timeout = '100ms'",
                "UPDATE reports SET reason = 'spam' WHERE post_id = \(Int(postID)!)",
                "ALTER TABLE reports DROP CONSTRAINT reports_reason_check",
                "ALTER TABLE reports ADD CONSTRAINT reports_reason_check CHECK (reason IN (\(raw: reasons))) NOT VALID",
            ]
            try await Self.schemaChange(widen, on: database)
            let answer: CurlResponseSnapshot
            do {
                answer = CurlResponseSnapshot(try await server.json("GET", "/v1/accounts/me/reports", token: reporter.token))
            } catch {
                try await Self.schemaChange(restore, on: database)
                throw error
            }
            try await Self.schemaChange(restore, on: database)
            try await Self.schemaChange(["ALTER TABLE reports VALIDATE CONSTRAINT reports_reason_check"], on: database)
            #expect(answer.status == 500)
            #expect(answer.errorCode == "internal_error")
            #expect(!answer.text.contains("bogus"))
            let known = try await server.json("GET", "/v1/accounts/me/reports", token: reporter.token)
            #expect(known.status == 200)
            #expect(known.items.first?["reason"] as? String == "spam")
        }
    }

    /// The login path's database fails after both failed-login limits took their hit: the hits go back, since no
    /// password was found wrong. The server's pool points nowhere; the rate limits count in the real database.
    /// Before the fix: one hit stayed in each bucket per failed attempt.
    @Test func aLoginTheDatabaseFailedKeepsNoFailedLoginHit() async throws {
        try await TestDatabase.migrated.value
        let limits = TestDatabase.pool(size: 2)
        let nowhere = PostgresPool(
            configuration: PostgresConfiguration(conninfo: "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2", poolSize: 1)
        )
        let limiter = RateLimiter(database: limits)
        let dependencies = AppDependencies(database: nowhere, hasher: PasswordHasher(threads: 1), rateLimiter: limiter)
        let username = "nobody_\(UInt32.random(in: 0...UInt32.max))"
        let address = TestClient.randomAddress()
        try await withTestServer(dependencies: dependencies) { server in
            for _ in 0..<3 {
                let answer = try await server.json(
                    "POST", "/v1/sessions", headers: [("X-Forwarded-For", address)], ["username": username, "password": "whatever it is 123"]
                )
                #expect(answer.status == 503)
                #expect(answer.errorCode == "database_unavailable")
            }
        }
        #expect(try await limiter.count(.failedLoginPerUsername, subject: username) == 0)
        #expect(try await limiter.count(.failedLoginPerIP, subject: address) == 0)
        await dependencies.shutdown()
        limits.shutdown()
    }
}

extension ModerationIntegrityTests {
    /// Runs `statements` in one transaction, again when one could not get its lock in time (55P03), at most 20 times.
    static func schemaChange(_ statements: [SQLQuery], on database: PostgresPool) async throws {
        for attempt in 1...100 {
            do {
                try await database.transaction { connection in for statement in statements { try connection.execute(statement) } }
                return
            } catch let error as PostgresError where error.sqlState == "55P03" && attempt < 100 {
                continue
            }
        }
    }
}

/// What a test keeps of an answer it reads after cleaning up.
struct CurlResponseSnapshot: Sendable {
    let status: Int
    let errorCode: String?
    let text: String

    init(_ response: CurlResponse) {
        status = response.status
        errorCode = response.errorCode
        text = response.text
    }
}
