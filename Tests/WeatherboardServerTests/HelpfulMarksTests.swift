@testable import Board
import CurlClient
import Database
import Foundation
import Testing

/// Helpful marks (CONTRACT §9) over HTTP against the real database: the calls' rules, exact counts under
/// concurrency, the allowance, trust, and the ranking following bans, unbans and deletions of the marker.
@Suite("Helpful marks")
struct HelpfulMarksTests {
    static func mark(_ server: TestServer, _ account: TestAccount, _ postID: String, _ method: String = "PUT") async throws -> CurlResponse {
        try await server.json(method, "/v1/posts/\(postID)/helpful", token: account.token)
    }

    /// Posts made straight in the database (the posting allowance is not under test here), oldest first.
    static func insertPosts(_ server: TestServer, author: TestAccount, count: Int, weatherType: String = "rain") async throws -> [String] {
        try await server.dependencies.database.query(
            """
            INSERT INTO posts (author_id, region_id, weather_type, category, body)
            SELECT \(Int(author.id)!), 1835848, \(weatherType), 'food', 'helpful ' || i FROM generate_series(1, \(count)) AS i RETURNING id
            """
        ).map { String(try $0.decode(Int.self, "id")) }.sorted { Int($0)! < Int($1)! }
    }

    /// The purger's statements for what turns with time (expired bans, aged marks), run alone: a whole pass would
    /// also purge what other suites are checking a pass of their own purges. They run with the default trust age (a
    /// day), whatever the test server's: the promotion is global, and with a trust age of 0 it made every other suite's
    /// fresh anonymous marks trusted at once (AdminCLITests saw its untrusted mark counted).
    static func purgeMarks(_ server: TestServer) async throws {
        let purger = Purger(database: server.dependencies.database, policy: Purger.Policy())
        for (kind, statement) in purger.statements() where ["expired_bans", "trusted_marks"].contains(kind) {
            try await server.dependencies.database.execute(statement)
        }
    }

    static func counts(_ server: TestServer, _ postID: String) async throws -> (all: Int, trusted: Int) {
        let row = try await server.dependencies.database.query(
            "SELECT helpful_count, trusted_helpful_count FROM posts WHERE id = \(Int(postID)!)"
        )[0]
        return (try row.decode(Int.self, "helpful_count"), try row.decode(Int.self, "trusted_helpful_count"))
    }

    /// The ids of an author's posts in `sort` order (`authorId` filter keeps other tests' posts out).
    static func order(_ server: TestServer, author: TestAccount, sort: String) async throws -> [String] {
        let page = try await server.json("GET", "/v1/posts?authorId=\(author.id)&sort=\(sort)&limit=100")
        try #require(page.status == 200, "list answered \(page.status): \(page.text)")
        return page.items.compactMap { $0["id"] as? String }
    }

    @Test("PUT and DELETE are idempotent; counts and helpedByMe show on the post and in lists; own, unseen and banned are refused")
    func rules() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let marker = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)

            for _ in 0..<2 {
                let marked = try await Self.mark(server, marker, postID)
                #expect(marked.status == 200, "\(marked.text)")
                #expect(marked.object["helpfulCount"] as? Int == 1)
                #expect(marked.object["helpedByMe"] as? Bool == true)
            }
            let seen = try await server.json("GET", "/v1/posts/\(postID)", token: marker.token)
            #expect(seen.object["helpfulCount"] as? Int == 1)
            #expect(seen.object["helpedByMe"] as? Bool == true)
            let anonymous = try await server.json("GET", "/v1/posts/\(postID)")
            #expect(anonymous.object["helpfulCount"] as? Int == 1)
            #expect(anonymous.object["helpedByMe"] as? Bool == false)
            #expect(anonymous.object["trustedHelpfulCount"] == nil, "the trusted count is for moderators")
            let listed = try await server.json("GET", "/v1/posts?authorId=\(author.id)", token: marker.token).items.first
            #expect(listed?["helpfulCount"] as? Int == 1)
            #expect(listed?["helpedByMe"] as? Bool == true)
            let listedByAuthor = try await server.json("GET", "/v1/posts?authorId=\(author.id)", token: author.token).items.first
            #expect(listedByAuthor?["helpedByMe"] as? Bool == false)

            for _ in 0..<2 {
                let unmarked = try await Self.mark(server, marker, postID, "DELETE")
                #expect(unmarked.status == 200)
                #expect(unmarked.object["helpfulCount"] as? Int == 0)
                #expect(unmarked.object["helpedByMe"] as? Bool == false)
            }

            let own = try await Self.mark(server, author, postID)
            #expect(own.status == 403)
            #expect(own.errorCode == "forbidden")
            #expect(try await Self.mark(server, marker, "999999999").status == 404)
            #expect(try await Self.mark(server, marker, "+1").status == 404)
            #expect(try await server.json("PUT", "/v1/posts/\(postID)/helpful").status == 401)

            // A hidden post is not seen by others: 404, not a mark.
            try await server.dependencies.database.execute("UPDATE posts SET status = 'hidden', hidden_reason = 'reports' WHERE id = \(Int(postID)!)")
            #expect(try await Self.mark(server, marker, postID).status == 404)
            #expect(try await Self.counts(server, postID).all == 0)
            try await server.dependencies.database.execute("UPDATE posts SET status = 'visible', hidden_reason = NULL WHERE id = \(Int(postID)!)")

            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            #expect(try await server.json("POST", "/v1/moderation/accounts/\(marker.id)/ban", token: moderator.token, ["until": nil as String?, "reason": "spam"] as [String: Any?]).status == 200)
            let banned = try await Self.mark(server, marker, postID)
            #expect(banned.status == 403)
            #expect(banned.errorCode == "account_banned")
        }
    }

    @Test("100 accounts marking at once make 100; one account marking 50 times at once makes 1")
    func concurrentCounts() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false; $0.dbPoolSize = 8 }) { server in
            let author = try await server.anonymousAccount()
            let posts = try await Self.insertPosts(server, author: author, count: 2)
            var markers: [TestAccount] = []
            for _ in 0..<100 { markers.append(try await server.anonymousAccount()) }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for marker in markers { group.addTask { try await Self.mark(server, marker, posts[0]).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses.filter { $0 != 200 })")
            #expect(try await Self.counts(server, posts[0]).all == 100)
            #expect(try await server.json("GET", "/v1/posts/\(posts[0])").object["helpfulCount"] as? Int == 100)

            let one = markers[0]
            let repeated = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 { group.addTask { try await Self.mark(server, one, posts[1]).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(repeated.allSatisfy { $0 == 200 })
            #expect(try await Self.counts(server, posts[1]).all == 1)
        }
    }

    @Test("an anonymous account gets 60 new marks an hour; a repeat is free; a parallel burst admits exactly the limit")
    func allowance() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let posts = try await Self.insertPosts(server, author: author, count: 75)
            let marker = try await server.anonymousAccount()
            // A parallel burst of 70 new marks: exactly 60 get through, and exactly 60 marks exist.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for post in posts.prefix(70) { group.addTask { try await Self.mark(server, marker, post).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 200 }.count == 60)
            #expect(statuses.filter { $0 == 429 }.count == 10)
            let made = try await server.dependencies.database.query(
                "SELECT count(*) AS n FROM helpful_marks WHERE account_id = \(Int(marker.id)!)"
            )[0].decode(Int.self, "n")
            #expect(made == 60)
            // At the limit: a repeat of a mark it has is free, a new one is refused with Retry-After.
            let markedPost = try #require(try await server.dependencies.database.query(
                "SELECT post_id FROM helpful_marks WHERE account_id = \(Int(marker.id)!) LIMIT 1"
            ).first?.decode(Int.self, "post_id"))
            let repeatMark = try await Self.mark(server, marker, String(markedPost))
            #expect(repeatMark.status == 200)
            #expect(repeatMark.object["helpedByMe"] as? Bool == true)
            let refused = try await Self.mark(server, marker, posts[72])
            #expect(refused.status == 429)
            #expect(refused.errorCode == "rate_limited")
            #expect(refused.headers.contains { $0.0.lowercased() == "retry-after" })
        }
    }

    @Test("a fresh anonymous account's mark shows in helpfulCount but does not move top; registering makes it count")
    func trust() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let posts = try await Self.insertPosts(server, author: author, count: 2)  // posts[1] is newer
            let fresh = try await server.anonymousAccount()
            #expect(try await Self.mark(server, fresh, posts[0]).object["helpfulCount"] as? Int == 1)
            #expect(try await Self.counts(server, posts[0]) == (1, 0))
            #expect(try await Self.order(server, author: author, sort: "top") == [posts[1], posts[0]])
            #expect(try await Self.order(server, author: author, sort: "hot") == [posts[1], posts[0]])

            // Registering the same account makes its mark trusted: the older post now leads.
            let username = "marker_\(UInt32.random(in: 0...UInt32.max))"
            let registered = try await server.json(
                "POST", "/v1/accounts/me/credentials", token: fresh.token, ["username": username, "password": "correct horse battery staple"]
            )
            #expect(registered.status == 200)
            #expect(try await Self.counts(server, posts[0]) == (1, 1))
            #expect(try await Self.order(server, author: author, sort: "top") == [posts[0], posts[1]])
            #expect(try await Self.order(server, author: author, sort: "new") == [posts[1], posts[0]])
        }
        // Old enough anonymous accounts are trusted (REPORT_TRUST_AGE_SECONDS = 0: all of them).
        try await withTestServer(configure: { $0.rateLimitsEnabled = false; $0.reportTrustAgeSeconds = 0 }) { server in
            let author = try await server.anonymousAccount()
            let posts = try await Self.insertPosts(server, author: author, count: 2)
            _ = try await Self.mark(server, try await server.anonymousAccount(), posts[0])
            #expect(try await Self.counts(server, posts[0]) == (1, 1))
            #expect(try await Self.order(server, author: author, sort: "top") == [posts[0], posts[1]])
        }
    }

    @Test("a ban of the marker takes its marks out of the ranking, an unban puts them back, a deletion deletes them")
    func banAndDeletion() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false; $0.reportTrustAgeSeconds = 0 }) { server in
            let author = try await server.anonymousAccount()
            let posts = try await Self.insertPosts(server, author: author, count: 2)  // same created_at: only marks rank them
            let marker = try await server.anonymousAccount()
            let other = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            // Two trusted marks: `top` and `hot` (log10(2) > log10(1) = 0) both lift the older post.
            _ = try await Self.mark(server, marker, posts[0])
            _ = try await Self.mark(server, other, posts[0])
            #expect(try await Self.counts(server, posts[0]) == (2, 2))
            #expect(try await Self.order(server, author: author, sort: "top") == [posts[0], posts[1]])
            #expect(try await Self.order(server, author: author, sort: "hot") == [posts[0], posts[1]])

            let ban = try await server.json("POST", "/v1/moderation/accounts/\(marker.id)/ban", token: moderator.token, ["until": nil as String?, "reason": "brigading"] as [String: Any?])
            #expect(ban.status == 200)
            #expect(try await Self.counts(server, posts[0]) == (2, 1))
            #expect(try await Self.order(server, author: author, sort: "hot") == [posts[1], posts[0]])
            let shown = try await server.json("GET", "/v1/posts/\(posts[0])", token: moderator.token)
            #expect(shown.object["trustedHelpfulCount"] as? Int == 1)
            #expect(shown.object["helpfulCount"] as? Int == 2)

            #expect(try await server.json("DELETE", "/v1/moderation/accounts/\(marker.id)/ban", token: moderator.token).status == 204)
            #expect(try await Self.counts(server, posts[0]) == (2, 2))
            #expect(try await Self.order(server, author: author, sort: "hot") == [posts[0], posts[1]])

            // A timed ban that has run out counts again once the purger clears it.
            _ = try await server.json("POST", "/v1/moderation/accounts/\(marker.id)/ban", token: moderator.token, ["until": RFC3339Now.plus(seconds: 3600), "reason": "cool off"])
            #expect(try await Self.counts(server, posts[0]) == (2, 1))
            try await server.dependencies.database.execute("UPDATE accounts SET banned_until = now() - interval '1 second' WHERE id = \(Int(marker.id)!)")
            try await Self.purgeMarks(server)
            #expect(try await Self.counts(server, posts[0]) == (2, 2))

            #expect(try await server.json("DELETE", "/v1/accounts/me", token: marker.token).status == 204)
            #expect(try await Self.counts(server, posts[0]) == (1, 1))
            #expect(try await Self.order(server, author: author, sort: "hot") == [posts[1], posts[0]])
            #expect(try await Self.order(server, author: author, sort: "top") == [posts[0], posts[1]])
            let marks = try await server.dependencies.database.query("SELECT count(*) AS n FROM helpful_marks WHERE account_id = \(Int(marker.id)!)")
            #expect(try marks[0].decode(Int.self, "n") == 0)
            // The other marker's deletion leaves the post with none.
            #expect(try await server.json("DELETE", "/v1/accounts/me", token: other.token).status == 204)
            #expect(try await Self.counts(server, posts[0]) == (0, 0))
            #expect(try await Self.order(server, author: author, sort: "top") == [posts[1], posts[0]])
        }
    }

    /// These posts' counters against their marks, and their marks' `counted` against their accounts, in one snapshot.
    /// (Other suites set counters straight on their own posts.)
    static func drift(_ posts: [String]) -> SQLQuery {
        """
        SELECT (SELECT count(*) FROM posts p
                LEFT JOIN (SELECT post_id, count(*) AS n, count(*) FILTER (WHERE counted) AS t FROM helpful_marks GROUP BY post_id) m ON m.post_id = p.id
                WHERE p.id = ANY(\(posts)::int8[]) AND (p.helpful_count, p.trusted_helpful_count) <> (COALESCE(m.n, 0), COALESCE(m.t, 0)))
             + (SELECT count(*) FROM helpful_marks h JOIN accounts a ON a.id = h.account_id
                WHERE h.post_id = ANY(\(posts)::int8[]) AND (h.counted <> (h.trusted AND NOT a.banned) OR a.deleted_at IS NOT NULL)) AS n
        """
    }

    @Test("marks, bans, unbans and deletions at once leave every counter equal to its marks")
    func concurrentBans() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false; $0.reportTrustAgeSeconds = 0; $0.dbPoolSize = 8 }) { server in
            let author = try await server.anonymousAccount()
            let posts = try await Self.insertPosts(server, author: author, count: 4)
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            var markers: [TestAccount] = []
            for _ in 0..<24 { markers.append(try await server.anonymousAccount()) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, marker) in markers.enumerated() {
                    group.addTask {
                        for post in posts { _ = try await Self.mark(server, marker, post) }
                    }
                    group.addTask {
                        switch index % 4 {
                        case 0:
                            _ = try await server.json("POST", "/v1/moderation/accounts/\(marker.id)/ban", token: moderator.token, ["until": nil as String?, "reason": "wave"] as [String: Any?])
                        case 1:
                            _ = try await server.json("POST", "/v1/moderation/accounts/\(marker.id)/ban", token: moderator.token, ["until": nil as String?, "reason": "wave"] as [String: Any?])
                            _ = try await server.json("DELETE", "/v1/moderation/accounts/\(marker.id)/ban", token: moderator.token)
                        case 2:
                            _ = try await server.json("DELETE", "/v1/accounts/me", token: marker.token)
                        default:
                            _ = try await Self.mark(server, marker, posts[0], "DELETE")
                        }
                    }
                }
                try await group.waitForAll()
            }
            let drift = try await server.dependencies.database.query(Self.drift(posts))[0].decode(Int.self, "n")
            #expect(drift == 0)
            // Deleted markers left no marks; banned ones' marks stay but do not count.
            let deleted = markers.enumerated().filter { $0.offset % 4 == 2 }.map { Int($0.element.id)! }
            let left = try await server.dependencies.database.query("SELECT count(*) AS n FROM helpful_marks WHERE account_id = ANY(\(deleted.map(String.init))::int8[])")
            #expect(try left[0].decode(Int.self, "n") == 0)
        }
    }

    @Test("marks of anonymous accounts become trusted with age: the purger promotes marks older than the trust age")
    func agedMarks() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let posts = try await Self.insertPosts(server, author: author, count: 2)
            let marker = try await server.anonymousAccount()
            _ = try await Self.mark(server, marker, posts[0])
            #expect(try await Self.counts(server, posts[0]) == (1, 0))
            // A day later (the account and its mark made a day ago).
            try await server.dependencies.database.execute("UPDATE accounts SET created_at = now() - interval '2 days' WHERE id = \(Int(marker.id)!)")
            try await server.dependencies.database.execute("UPDATE helpful_marks SET created_at = now() - interval '2 days' WHERE account_id = \(Int(marker.id)!)")
            try await Self.purgeMarks(server)
            #expect(try await Self.counts(server, posts[0]) == (1, 1))
            #expect(try await Self.order(server, author: author, sort: "top") == [posts[0], posts[1]])
        }
    }
}

/// RFC 3339 times for request bodies.
enum RFC3339Now {
    static func plus(seconds: Int) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date().addingTimeInterval(TimeInterval(seconds)))
    }
}
