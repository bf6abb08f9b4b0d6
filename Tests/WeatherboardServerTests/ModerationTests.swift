import CurlClient
import Database
import Foundation
import Testing

@Suite("Reports and moderation")
struct ModerationTests {
    func report(_ server: TestServer, _ account: TestAccount, _ postID: String, reason: String = "spam", note: String? = nil) async throws -> CurlResponse {
        var body: [String: Any] = ["reason": reason]
        if let note { body["note"] = note }
        return try await server.json("POST", "/v1/posts/\(postID)/reports", token: account.token, body)
    }

    func status(_ server: TestServer, _ postID: String) async throws -> String {
        try await server.dependencies.database.query("SELECT status FROM posts WHERE id = \(Int(postID)!)")[0].decode(String.self, "status")
    }

    @Test("fresh anonymous reporters never hide a post on their own; trusted ones do at the threshold")
    func thresholdWithTrust() async throws {
        // Default trust age (a day): brand-new anonymous accounts are untrusted.
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            for _ in 0..<5 {
                let reporter = try await server.anonymousAccount()
                #expect(try await report(server, reporter, postID).status == 201)
            }
            #expect(try await status(server, postID) == "visible")
            // Registered reporters are trusted: three of them hide it at once.
            for i in 0..<3 {
                let (reporter, _, _) = try await server.registeredAccount(prefix: "rep")
                #expect(try await report(server, reporter, postID).status == 201)
                #expect(try await status(server, postID) == (i < 2 ? "visible" : "hidden"))
            }
            #expect(try await server.json("GET", "/v1/posts/\(postID)").status == 404)
        }
        // With REPORT_TRUST_AGE_SECONDS=0 every anonymous account counts as old enough.
        try await withTestServer(configure: {
            $0.rateLimitsEnabled = false
            $0.reportTrustAgeSeconds = 0
            $0.reportHideThreshold = 2
        }) { server in
            let author = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            _ = try await report(server, try await server.anonymousAccount(), postID)
            #expect(try await status(server, postID) == "visible")
            _ = try await report(server, try await server.anonymousAccount(), postID)
            #expect(try await status(server, postID) == "hidden")
        }
    }

    @Test("a repeat report answers 200 with the same report and is not counted twice")
    func repeatReport() async throws {
        try await withTestServer(configure: {
            $0.rateLimitsEnabled = false
            $0.reportTrustAgeSeconds = 0
            $0.reportHideThreshold = 2
        }) { server in
            let author = try await server.anonymousAccount()
            let reporter = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let first = try await report(server, reporter, postID, reason: "abuse", note: "욕설")
            #expect(first.status == 201)
            #expect(first.object["outcome"] as? String == "open")
            #expect(first.object["reason"] as? String == "abuse")
            let second = try await report(server, reporter, postID, reason: "spam")
            #expect(second.status == 200)
            #expect(second.object["id"] as? String == first.object["id"] as? String)
            #expect(second.object["reason"] as? String == "abuse")
            #expect(try await status(server, postID) == "visible")
        }
    }

    @Test("report validation: reason, note length, own post, unknown post")
    func reportValidation() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let reporter = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let badReason = try await report(server, reporter, postID, reason: "boring")
            #expect(badReason.status == 422)
            #expect(badReason.errorMessage?.hasPrefix("reason") == true)
            #expect(try await report(server, reporter, postID, reason: "filter").status == 422)
            let longNote = try await report(server, reporter, postID, note: String(repeating: "n", count: 501))
            #expect(longNote.status == 422)
            #expect(try await report(server, author, postID).status == 403)
            #expect(try await report(server, reporter, "987654321").status == 404)
            #expect(try await server.json("POST", "/v1/posts/\(postID)/reports", ["reason": "spam"]).status == 401)
        }
    }

    @Test("snapshots survive later edits; the queue shows the post with status and revisions")
    func snapshotsAndQueue() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let reporter = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let postID = try #require(try await server.createPost(author, title: "원래 제목", body: "original body")["id"] as? String)
            #expect(try await report(server, reporter, postID, reason: "misinformation", note: "거짓").status == 201)
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: author.token, ["title": "바뀐 제목", "body": "edited body"]).status == 200)

            let item = try await queueItem(server, moderator, postID)
            let reports = try #require(item["reports"] as? [[String: Any]])
            #expect(reports.count == 1)
            #expect(reports[0]["reportedTitle"] as? String == "원래 제목")
            #expect(reports[0]["reportedBody"] as? String == "original body")
            #expect(reports[0]["reporterId"] as? String == reporter.id)
            #expect(reports[0]["note"] as? String == "거짓")
            #expect(item["openReportCount"] as? Int == 1)
            #expect(item["firstReportedAt"] is String)
            let post = try #require(item["post"] as? [String: Any])
            #expect(post["body"] as? String == "edited body")
            #expect(post["status"] as? String == "visible")
            let revisions = try #require(post["revisions"] as? [[String: Any]])
            #expect(revisions.map { $0["body"] as? String } == ["original body"])
        }
    }

    func queueItem(_ server: TestServer, _ moderator: TestAccount, _ postID: String) async throws -> [String: Any] {
        var cursor: String?
        repeat {
            let page = try await server.json("GET", "/v1/moderation/queue?limit=100" + (cursor.map { "&cursor=\($0)" } ?? ""), token: moderator.token)
            try #require(page.status == 200, "queue answered \(page.status): \(page.text)")
            if let item = page.items.first(where: { ($0["post"] as? [String: Any])?["id"] as? String == postID }) { return item }
            cursor = page.object["nextCursor"] as? String
        } while cursor != nil
        throw TestFailure("post \(postID) is not in the queue")
    }

    @Test("decisions resolve every open report; dismiss unhides, remove removes, only restore undoes a removal; all logged")
    func decisions() async throws {
        try await withTestServer(configure: {
            $0.rateLimitsEnabled = false
            $0.reportTrustAgeSeconds = 0
            $0.reportHideThreshold = 3
        }) { server in
            let author = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            var reporters: [TestAccount] = []
            for _ in 0..<3 {
                let reporter = try await server.anonymousAccount()
                reporters.append(reporter)
                _ = try await report(server, reporter, postID)
            }
            #expect(try await status(server, postID) == "hidden")

            let dismissed = try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "dismiss", "note": "괜찮음"])
            #expect(dismissed.status == 200)
            #expect(dismissed.object["resolvedReports"] as? Int == 3)
            #expect((dismissed.object["post"] as? [String: Any])?["status"] as? String == "visible")
            let outcomes = try await server.json("GET", "/v1/accounts/me/reports", token: reporters[0].token)
            #expect(outcomes.items.first?["outcome"] as? String == "dismissed")

            // A new report after the decision, then remove.
            _ = try await report(server, try await server.anonymousAccount(), postID)
            let removed = try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "remove"])
            #expect(removed.object["resolvedReports"] as? Int == 1)
            #expect(try await status(server, postID) == "removed")
            // Dismiss does not undo a removal; restore does.
            _ = try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "dismiss"])
            #expect(try await status(server, postID) == "removed")
            _ = try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "restore", "note": "실수"])
            #expect(try await status(server, postID) == "visible")
            #expect(try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "nuke"]).status == 422)
            #expect(try await server.json("POST", "/v1/moderation/posts/424242424/decision", token: moderator.token, ["action": "remove"]).status == 404)

            let log = try await server.json("GET", "/v1/moderation/log?limit=100", token: moderator.token)
            // Post and account ids are separate sequences: another suite's ban can name an account of this id.
            let mine = log.items.filter { $0["targetType"] as? String == "post" && $0["targetId"] as? String == postID }
            #expect(mine.map { $0["action"] as? String } == ["restore", "dismiss", "remove", "dismiss"])
            #expect(mine.first?["moderatorId"] as? String == moderator.id)
            #expect(mine.first?["targetType"] as? String == "post")
            #expect(mine.first?["note"] as? String == "실수")
        }
    }

    @Test("non-moderators get 403 forbidden on the moderator API")
    func forbidden() async throws {
        try await withTestServer { server in
            let member = try await server.anonymousAccount()
            for (method, path) in [("GET", "/v1/moderation/queue"), ("GET", "/v1/moderation/log"), ("POST", "/v1/moderation/posts/1/decision"),
                                   ("POST", "/v1/moderation/accounts/1/ban"), ("DELETE", "/v1/moderation/accounts/1/ban")] {
                let response = try await server.json(method, path, token: member.token, method == "POST" ? ["action": "remove", "reason": "x"] : nil)
                #expect(response.status == 403, "\(method) \(path)")
                #expect(response.errorCode == "forbidden")
            }
            #expect(try await server.json("GET", "/v1/moderation/queue").status == 401)
        }
    }

    @Test("bans: a banned account reads but cannot post, edit or report; timed bans lift by themselves; unban")
    func bans() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let target = try await server.anonymousAccount()
            let other = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(target)["id"] as? String)
            let othersPost = try #require(try await server.createPost(other)["id"] as? String)

            let until = Date().addingTimeInterval(3 * 86_400).formatted(.iso8601)
            let banned = try await server.json("POST", "/v1/moderation/accounts/\(target.id)/ban", token: moderator.token, ["until": until, "reason": "스팸"])
            #expect(banned.status == 200)
            #expect(banned.object["banned"] as? Bool == true)
            #expect(banned.object["bannedUntil"] as? String == until)
            #expect(try await server.json("GET", "/v1/posts/\(othersPost)", token: target.token).status == 200)
            #expect(try await server.json("POST", "/v1/posts", token: target.token, ["weatherType": "rain", "category": "food", "body": "x", "regionId": "1835848"]).errorCode == "account_banned")
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: target.token, ["body": "y"]).errorCode == "account_banned")
            #expect(try await report(server, target, othersPost).errorCode == "account_banned")
            #expect(try await server.json("DELETE", "/v1/moderation/accounts/\(target.id)/ban", token: moderator.token).status == 204)
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: target.token, ["body": "y"]).status == 200)

            // Permanent ban, then a ban whose end has passed no longer applies.
            let permanent = try await server.json("POST", "/v1/moderation/accounts/\(target.id)/ban", token: moderator.token, ["until": NSNull(), "reason": "영구"])
            #expect(permanent.object["banned"] as? Bool == true)
            #expect(permanent.object["bannedUntil"] is NSNull)
            try await server.dependencies.database.execute("UPDATE accounts SET banned_until = now() - interval '1 second' WHERE id = \(Int(target.id)!)")
            let me = try await server.json("GET", "/v1/accounts/me", token: target.token)
            #expect(me.object["banned"] as? Bool == false)
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: target.token, ["body": "z"]).status == 200)

            #expect(try await server.json("POST", "/v1/moderation/accounts/\(target.id)/ban", token: moderator.token, ["until": "2001-01-01T00:00:00Z", "reason": "x"]).status == 422)
            #expect(try await server.json("POST", "/v1/moderation/accounts/\(target.id)/ban", token: moderator.token, ["until": NSNull()]).status == 422)
            #expect(try await server.json("POST", "/v1/moderation/accounts/777777777/ban", token: moderator.token, ["until": NSNull(), "reason": "x"]).status == 404)

            let log = try await server.json("GET", "/v1/moderation/log?limit=100", token: moderator.token)
            let actions = log.items.filter { $0["targetType"] as? String == "account" && $0["targetId"] as? String == target.id }.map { $0["action"] as? String }
            #expect(actions == ["ban", "unban", "ban"])
        }
    }

    @Test("the term filter holds a matching post for review without telling its author")
    func termFilter() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let term = "금지어\(UInt16.random(in: 0...9999))"
            _ = try await server.dependencies.moderation.addTerm(term.uppercased())
            let author = try await server.anonymousAccount()
            // Decomposed Hangul and different case still match.
            let body = "오늘의 추천: " + term.decomposedStringWithCanonicalMapping + " 최고"
            let post = try await server.createPost(author, body: body)
            let postID = try #require(post["id"] as? String)
            #expect(post["status"] as? String == "visible")
            #expect(try await status(server, postID) == "hidden")
            #expect(try await server.json("GET", "/v1/posts/\(postID)").status == 404)
            let item = try await queueItem(server, moderator, postID)
            #expect((item["reports"] as? [[String: Any]])?.first?["reason"] as? String == "filter")
            #expect((item["reports"] as? [[String: Any]])?.first?["reporterId"] is NSNull)

            // An edit that adds a term is held too.
            let clean = try #require(try await server.createPost(author, body: "깨끗한 글")["id"] as? String)
            #expect(try await server.json("PATCH", "/v1/posts/\(clean)", token: author.token, ["body": "이제 \(term) 포함"]).status == 200)
            #expect(try await status(server, clean) == "hidden")
            #expect(try await server.dependencies.moderation.removeTerm(term))
        }
    }

    @Test("a moderator's deletion of someone else's post is logged")
    func moderatorDeletionLogged() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            #expect(try await server.json("DELETE", "/v1/posts/\(postID)", token: moderator.token).status == 204)
            let log = try await server.json("GET", "/v1/moderation/log", token: moderator.token)
            #expect(log.items.contains { $0["targetType"] as? String == "post" && $0["targetId"] as? String == postID && $0["action"] as? String == "delete" })
        }
    }
}
