import CurlClient
import Foundation
import Testing

/// Replies under moderation (CONTRACT §13): reports with snapshots, trusted auto-hide, the queue holding posts and
/// replies oldest first, decisions and the log, the term filter, account deletion keeping evidence, and the live board.
@Suite("Replies under moderation")
struct ReplyModerationTests {
    static func report(_ server: TestServer, _ account: TestAccount, reply replyID: String, reason: String = "abuse") async throws -> CurlResponse {
        try await server.json("POST", "/v1/replies/\(replyID)/reports", token: account.token, ["reason": reason, "note": "신고"])
    }

    static func replyStatus(_ server: TestServer, _ replyID: String) async throws -> String {
        try await server.dependencies.database.query("SELECT status FROM replies WHERE id = \(Int(replyID)!)")[0].decode(String.self, "status")
    }

    /// Every queue item, walked to the end.
    static func queue(_ server: TestServer, _ moderator: TestAccount) async throws -> [[String: Any]] {
        var items: [[String: Any]] = []
        var cursor: String?
        repeat {
            let page = try await server.json("GET", "/v1/moderation/queue?limit=100" + (cursor.map { "&cursor=\($0)" } ?? ""), token: moderator.token)
            try #require(page.status == 200, "queue answered \(page.status): \(page.text)")
            items += page.items
            cursor = page.object["nextCursor"] as? String
        } while cursor != nil
        return items
    }

    /// An item's target as `post:ID` or `reply:ID`.
    static func target(_ item: [String: Any]) -> String {
        if item["target"] as? String == "reply" { return "reply:\((item["reply"] as? [String: Any])?["id"] as? String ?? "?")" }
        return "post:\((item["post"] as? [String: Any])?["id"] as? String ?? "?")"
    }

    @Test("reports on replies: 201 then 200, never one's own or one unseen, a snapshot that survives edits, listed as the reporter's")
    func reports() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let reporter = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let replyID = try await RepliesTests.replyID(server, replier, to: postID, "처음 쓴 나쁜 말")
            let first = try await Self.report(server, reporter, reply: replyID)
            #expect(first.status == 201, "\(first.text)")
            #expect(first.object["target"] as? String == "reply")
            #expect(first.object["replyId"] as? String == replyID)
            #expect(first.object["postId"] as? String == postID)
            let again = try await Self.report(server, reporter, reply: replyID, reason: "spam")
            #expect(again.status == 200 && again.object["id"] as? String == first.object["id"] as? String, "a repeat answers the first report")
            // A report on the post itself is a different report.
            let onPost = try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporter.token, ["reason": "spam"])
            #expect(onPost.status == 201 && onPost.object["target"] as? String == "post")
            let own = try await Self.report(server, replier, reply: replyID)
            #expect(own.status == 403 && own.errorCode == "forbidden")
            #expect(try await Self.report(server, reporter, reply: "987654321098").status == 404)
            #expect(try await server.json("POST", "/v1/replies/\(replyID)/reports", token: reporter.token, ["reason": "filter"]).status == 422)

            #expect(try await server.json("PATCH", "/v1/replies/\(replyID)", token: replier.token, ["body": "고친 말"]).status == 200)
            let snapshot = try await server.dependencies.database.query("SELECT reported_body FROM reports WHERE id = \(Int(first.object["id"] as! String)!)")
            #expect(try snapshot[0].decode(String.self, "reported_body") == "처음 쓴 나쁜 말")
            let mine = try await server.json("GET", "/v1/accounts/me/reports", token: reporter.token).items
            #expect(mine.map { $0["target"] as? String } == ["post", "reply"], "newest first, both kinds")
        }
    }

    @Test("trusted reporters hide a reply at the threshold, fresh anonymous ones never; the hidden reply leaves every view and the count")
    func autoHide() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let replyID = try await RepliesTests.replyID(server, replier, to: postID)
            for _ in 0..<4 { #expect(try await Self.report(server, try await server.anonymousAccount(), reply: replyID).status == 201) }
            #expect(try await Self.replyStatus(server, replyID) == "visible", "fresh anonymous reporters can't hide a reply on their own")
            for index in 0..<3 {
                let (trusted, _, _) = try await server.registeredAccount(prefix: "rr")
                #expect(try await Self.report(server, trusted, reply: replyID).status == 201)
                #expect(try await Self.replyStatus(server, replyID) == (index < 2 ? "visible" : "hidden"), "after \(index + 1) trusted reports")
            }
            #expect(try await RepliesTests.replies(server, postID).isEmpty)
            #expect(try await RepliesTests.replies(server, postID, token: replier.token).first?["status"] as? String == "hidden", "its author sees it, hidden")
            #expect(try await RepliesTests.replyCount(server, postID) == 0)
            #expect(try await server.json("GET", "/v1/accounts/me/inbox", token: author.token).items.isEmpty)
        }
    }

    @Test("the queue holds posts and replies oldest first across both; decisions on replies resolve their reports and are logged")
    func queueAndDecisions() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let member = try await server.anonymousAccount()
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let reporter = try await server.anonymousAccount()
            let postA = try #require(try await server.createPost(author, body: "글 A")["id"] as? String)
            let postB = try #require(try await server.createPost(author, body: "글 B")["id"] as? String)
            let reply = try await RepliesTests.replyID(server, replier, to: postA, "댓글 R")
            #expect(try await server.json("PATCH", "/v1/replies/\(reply)", token: replier.token, ["body": "댓글 R 고침"]).status == 200)
            #expect(try await server.json("POST", "/v1/posts/\(postA)/reports", token: reporter.token, ["reason": "spam"]).status == 201)
            #expect(try await Self.report(server, reporter, reply: reply).status == 201)
            #expect(try await server.json("POST", "/v1/posts/\(postB)/reports", token: reporter.token, ["reason": "spam"]).status == 201)

            let mine = Set(["post:\(postA)", "reply:\(reply)", "post:\(postB)"])
            let items = try await Self.queue(server, moderator).filter { mine.contains(Self.target($0)) }
            #expect(items.map(Self.target) == ["post:\(postA)", "reply:\(reply)", "post:\(postB)"], "oldest first across both kinds")
            let replyItem = try #require(items.first { $0["target"] as? String == "reply" })
            #expect((replyItem["post"] as? [String: Any])?["id"] as? String == postA, "a reply's item carries its post for context")
            let shown = try #require(replyItem["reply"] as? [String: Any])
            #expect(shown["status"] as? String == "visible")
            #expect((shown["revisions"] as? [[String: Any]])?.map { $0["body"] as? String } == ["댓글 R"])
            let reports = try #require(replyItem["reports"] as? [[String: Any]])
            #expect(reports.count == 1 && reports[0]["reportedBody"] as? String == "댓글 R 고침" && reports[0]["reportedTitle"] is NSNull)
            #expect(replyItem["openReportCount"] as? Int == 1)
            #expect(((items.first?["reports"] as? [[String: Any]]) ?? []).count == 1, "the post's item holds only the post's own reports")

            let forbidden = try await server.json("POST", "/v1/moderation/replies/\(reply)/decision", token: member.token, ["action": "remove"])
            #expect(forbidden.status == 403 && forbidden.errorCode == "forbidden")
            #expect(try await server.json("POST", "/v1/moderation/replies/\(reply)/decision", token: moderator.token, ["action": "nuke"]).status == 422)
            #expect(try await server.json("POST", "/v1/moderation/replies/987654321098/decision", token: moderator.token, ["action": "remove"]).status == 404)
            let removed = try await server.json("POST", "/v1/moderation/replies/\(reply)/decision", token: moderator.token, ["action": "remove", "note": "욕설"])
            #expect(removed.status == 200, "\(removed.text)")
            #expect((removed.object["reply"] as? [String: Any])?["status"] as? String == "removed")
            #expect(removed.object["resolvedReports"] as? Int == 1)
            #expect(!(try await Self.queue(server, moderator)).contains { Self.target($0) == "reply:\(reply)" }, "resolved: out of the queue")
            #expect(try await Self.queue(server, moderator).contains { Self.target($0) == "post:\(postA)" }, "the post's own reports stay open")
            #expect(try await RepliesTests.replies(server, postA).isEmpty)
            #expect(try await RepliesTests.replies(server, postA, token: replier.token).first?["status"] as? String == "removed")
            let outcome = try await server.json("GET", "/v1/accounts/me/reports", token: reporter.token).items.first { $0["replyId"] as? String == reply }
            #expect(outcome?["outcome"] as? String == "actioned")

            let restored = try await server.json("POST", "/v1/moderation/replies/\(reply)/decision", token: moderator.token, ["action": "restore"])
            #expect((restored.object["reply"] as? [String: Any])?["status"] as? String == "visible")
            #expect(try await RepliesTests.replies(server, postA).count == 1)

            // A moderator's delete of someone else's reply is logged too.
            #expect(try await server.json("DELETE", "/v1/replies/\(reply)", token: moderator.token).status == 204)
            let log = try await server.json("GET", "/v1/moderation/log?limit=100", token: moderator.token).items
                .filter { $0["targetType"] as? String == "reply" && $0["targetId"] as? String == reply }
            #expect(log.map { $0["action"] as? String } == ["delete", "restore", "remove"], "newest first")
            #expect(log.last?["note"] as? String == "욕설")
        }
    }

    @Test("the term filter holds a reply like a post: its author sees it as visible, nobody else does, the queue has it")
    func termFilter() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let term = "댓글금지\(UInt16.random(in: 0...9999))"
            _ = try await server.dependencies.moderation.addTerm(term)
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let held = try await RepliesTests.reply(server, replier, to: postID, "이건 " + term.uppercased())
            #expect(held.status == 201 && held.object["status"] as? String == "visible", "the author is not told")
            let heldID = try #require(held.object["id"] as? String)
            #expect(try await Self.replyStatus(server, heldID) == "hidden")
            #expect(try await RepliesTests.replies(server, postID).isEmpty)
            #expect(try await RepliesTests.replyCount(server, postID) == 0)
            let item = try #require(try await Self.queue(server, moderator).first { Self.target($0) == "reply:\(heldID)" })
            #expect((item["reports"] as? [[String: Any]])?.first?["reason"] as? String == "filter")

            let clean = try await RepliesTests.replyID(server, replier, to: postID, "깨끗한 댓글")
            #expect(try await server.json("PATCH", "/v1/replies/\(clean)", token: replier.token, ["body": "이제 \(term)"]).status == 200)
            #expect(try await Self.replyStatus(server, clean) == "hidden", "an edit that adds a term is held too")

            let dismissed = try await server.json("POST", "/v1/moderation/replies/\(heldID)/decision", token: moderator.token, ["action": "dismiss"])
            #expect((dismissed.object["reply"] as? [String: Any])?["status"] as? String == "visible")
            #expect(try await RepliesTests.replies(server, postID).map { $0["id"] as? String } == [heldID])
            #expect(try await server.dependencies.moderation.removeTerm(term))
        }
    }

    @Test("account deletion erases replies and keeps reported ones as evidence, as for posts")
    func deletionKeepsEvidence() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let author = try await server.anonymousAccount()
            let leaving = try await server.anonymousAccount()
            let reporter = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let reported = try await RepliesTests.replyID(server, leaving, to: postID, "증거로 남을 말")
            let plain = try await RepliesTests.replyID(server, leaving, to: postID, "사라질 말")
            #expect(try await server.json("PATCH", "/v1/replies/\(plain)", token: leaving.token, ["body": "사라질 말 (고침)"]).status == 200)
            #expect(try await Self.report(server, reporter, reply: reported).status == 201)
            // The leaving account's own post, with a reply by someone else that was reported: kept as evidence too.
            let ownPost = try #require(try await server.createPost(leaving, body: "떠날 사람의 글")["id"] as? String)
            let onOwn = try await RepliesTests.replyID(server, author, to: ownPost, "남의 글에 단 댓글")
            #expect(try await Self.report(server, reporter, reply: onOwn).status == 201)
            #expect(try await RepliesTests.replyCount(server, postID) == 2)

            #expect(try await server.json("DELETE", "/v1/accounts/me", token: leaving.token).status == 204)
            #expect(try await RepliesTests.replies(server, postID).isEmpty)
            #expect(try await RepliesTests.replyCount(server, postID) == 0)
            #expect(try await server.dependencies.database.query("SELECT 1 FROM replies WHERE id = \(Int(plain)!)").isEmpty, "an unreported reply is gone")
            #expect(try await server.dependencies.database.query("SELECT 1 FROM reply_revisions WHERE reply_id = \(Int(plain)!)").isEmpty)
            let evidence = try await server.dependencies.database.query("SELECT body, deleted_at IS NOT NULL AS deleted FROM replies WHERE id = \(Int(reported)!)")
            #expect(try evidence.first?.decode(String.self, "body") == "", "the evidence reply keeps no text")
            #expect(try evidence.first?.decode(Bool.self, "deleted") == true)
            let items = try await Self.queue(server, moderator)
            let item = try #require(items.first { Self.target($0) == "reply:\(reported)" }, "open reports stay in the queue")
            #expect((item["reply"] as? [String: Any])?["status"] as? String == "deleted")
            #expect((item["reports"] as? [[String: Any]])?.first?["reportedBody"] as? String == "증거로 남을 말", "the snapshot stays")
            let onOwnItem = try #require(items.first { Self.target($0) == "reply:\(onOwn)" })
            #expect((onOwnItem["post"] as? [String: Any])?["status"] as? String == "deleted", "the deleted account's post stays as context")
            #expect(try await server.json("GET", "/v1/accounts/me/reports", token: reporter.token).items.count == 2, "the reporter still sees its reports")
        }
    }

    @Test("the live board: event reply on the streams that show the post, replyRemoved when it leaves; the moderation stream gets reply reports")
    func liveBoard() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let reporter = try await server.anonymousAccount()
            let region = try await StreamTests.region(server)
            let postID = try await StreamTests.post(server, author, region: region)
            let board = try await server.stream("/v1/stream?regionId=\(region)")
            try await StreamTests.opening(board)
            let elsewhere = try await server.stream("/v1/stream?weatherType=snow&regionId=\(region)")
            try await StreamTests.opening(elsewhere)
            let queue = try await server.stream("/v1/moderation/stream", token: moderator.token)
            try await StreamTests.opening(queue)

            let replyID = try await RepliesTests.replyID(server, replier, to: postID, "실시간 댓글")
            let appeared = try await board.nextEvent()
            #expect(appeared.event == "reply" && appeared.json["id"] as? String == replyID && appeared.json["postId"] as? String == postID, "\(appeared)")
            #expect(appeared.json["isMine"] as? Bool == false && appeared.json["status"] == nil)
            #expect(appeared.id != nil)
            #expect(try await server.json("PATCH", "/v1/replies/\(replyID)", token: replier.token, ["body": "고친 실시간 댓글"]).status == 200)
            let edited = try await board.nextEvent()
            #expect(edited.event == "reply" && edited.json["body"] as? String == "고친 실시간 댓글" && edited.json["edited"] as? Bool == true, "\(edited)")

            #expect(try await Self.report(server, reporter, reply: replyID).status == 201)
            let reported = try await queue.nextEvent(about: [postID])
            #expect(reported.event == "report" && reported.json["target"] as? String == "reply", "\(reported)")
            #expect((reported.json["reply"] as? [String: Any])?["id"] as? String == replyID)

            #expect(try await server.json("POST", "/v1/moderation/replies/\(replyID)/decision", token: moderator.token, ["action": "remove"]).status == 200)
            let gone = try await board.nextEvent()
            #expect(gone.event == "replyRemoved" && gone.json["id"] as? String == replyID && gone.json["postId"] as? String == postID, "\(gone)")
            let resolved = try await queue.nextEvent(about: [postID])
            #expect(resolved.event == "resolved" && resolved.json["replyId"] as? String == replyID && resolved.json["action"] as? String == "remove", "\(resolved)")

            // A reply on a post the stream does not show is not on it: the snow stream's next event is the snow post's.
            let snow = try await StreamTests.post(server, author, region: region, weatherType: "snow")
            let next = try await elsewhere.nextEvent()
            #expect(next.event == "post" && next.json["id"] as? String == snow, "a rain post's replies reached a snow stream: \(next)")
        }
    }

    @Test("a stream resuming with Last-Event-ID gets the reply events it missed, in order, none twice, then live ones")
    func resume() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let region = try await StreamTests.region(server)
            let postID = try await StreamTests.post(server, author, region: region)
            let first = try await server.stream("/v1/stream?regionId=\(region)")
            try await StreamTests.opening(first)
            let r1 = try await RepliesTests.replyID(server, replier, to: postID, "하나")
            let seen = try await first.nextEvent()
            #expect(seen.event == "reply" && seen.json["id"] as? String == r1)
            let lastID = try #require(seen.id)
            first.close()
            // Missed while away: two new replies and an edit of the first.
            let r2 = try await RepliesTests.replyID(server, replier, to: postID, "둘")
            let r3 = try await RepliesTests.replyID(server, replier, to: postID, "셋")
            #expect(try await server.json("PATCH", "/v1/replies/\(r1)", token: replier.token, ["body": "하나 (고침)"]).status == 200)
            let resumed = try await server.stream("/v1/stream?regionId=\(region)", lastEventID: lastID)
            try await StreamTests.opening(resumed, live: false)
            var got: [String] = []
            for _ in 0..<3 {
                let message = try await resumed.nextEvent()
                #expect(message.event == "reply", "\(message)")
                got.append((message.json["id"] as? String ?? "?") + (message.json["edited"] as? Bool == true ? "e" : ""))
            }
            #expect(got == [r2, r3, r1 + "e"], "the missed events in commit order, none twice")
            let r4 = try await RepliesTests.replyID(server, replier, to: postID, "넷")
            let live = try await resumed.nextEvent()
            #expect(live.event == "reply" && live.json["id"] as? String == r4, "then live: \(live)")
        }
    }
}
