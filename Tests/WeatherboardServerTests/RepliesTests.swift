import CurlClient
import Foundation
import Testing

/// Replies (CONTRACT §13) over HTTP against the real database: the calls and their rules, visibility that follows the
/// post, blocks and bans, idempotency, the limit under a burst, ordering and counts under concurrency, keyset walks,
/// the inbox and its unread count.
@Suite("Replies")
struct RepliesTests {
    static func reply(_ server: TestServer, _ account: TestAccount, to postID: String, _ body: String = "어디예요?", headers: [(String, String)] = []) async throws -> CurlResponse {
        try await server.json("POST", "/v1/posts/\(postID)/replies", token: account.token, headers: headers, ["body": body])
    }

    static func replyID(_ server: TestServer, _ account: TestAccount, to postID: String, _ body: String = "어디예요?") async throws -> String {
        let response = try await reply(server, account, to: postID, body)
        try #require(response.status == 201, "reply answered \(response.status): \(response.text)")
        return try #require(response.object["id"] as? String)
    }

    static func replies(_ server: TestServer, _ postID: String, token: String? = nil, query: String = "limit=100") async throws -> [[String: Any]] {
        let page = try await server.json("GET", "/v1/posts/\(postID)/replies?\(query)", token: token)
        try #require(page.status == 200, "replies answered \(page.status): \(page.text)")
        return page.items
    }

    static func replyCount(_ server: TestServer, _ postID: String, token: String? = nil) async throws -> Int? {
        try await server.json("GET", "/v1/posts/\(postID)", token: token).object["replyCount"] as? Int
    }

    @Test("create, read, list oldest first, edit with ETag and If-Match, delete; replyCount follows; isPostAuthor, isMine, status")
    func lifecycle() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let other = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            #expect(try await Self.replyCount(server, postID) == 0)

            let created = try await Self.reply(server, other, to: postID, "  파전집 어디예요?\r\n  ")
            #expect(created.status == 201, "\(created.text)")
            let first = created.object
            #expect(first["body"] as? String == "파전집 어디예요?", "text is normalized and trimmed as for posts")
            #expect(first["postId"] as? String == postID)
            #expect(first["isPostAuthor"] as? Bool == false)
            #expect(first["isMine"] as? Bool == true)
            #expect(first["edited"] as? Bool == false)
            #expect(first["status"] as? String == "visible", "the author sees its reply's status")
            #expect((first["author"] as? [String: Any])?["id"] as? String == other.id)
            let firstID = try #require(first["id"] as? String)
            let answer = try await Self.replyID(server, author, to: postID, "시청 앞이에요")

            let listed = try await Self.replies(server, postID)
            #expect(listed.compactMap { $0["id"] as? String } == [firstID, answer], "oldest first")
            #expect(listed.last?["isPostAuthor"] as? Bool == true, "the post's author is badged")
            #expect(listed.first?["isMine"] as? Bool == false)
            #expect(listed.first?["status"] == nil, "status is for the author and moderators")
            #expect(try await Self.replyCount(server, postID) == 2)
            let inList = try await server.json("GET", "/v1/posts?authorId=\(author.id)").items.first
            #expect(inList?["replyCount"] as? Int == 2, "lists carry replyCount too")

            // Edits: ETag, If-Match, revisions.
            let shown = try await server.json("GET", "/v1/replies/\(firstID)")
            #expect(shown.status == 200)
            let etag = try #require(shown.header("etag"))
            let edited = try await server.json("PATCH", "/v1/replies/\(firstID)", token: other.token, headers: [("If-Match", etag)], ["body": "파전집 위치 알려주세요"])
            #expect(edited.status == 200, "\(edited.text)")
            #expect(edited.object["edited"] as? Bool == true)
            #expect(edited.header("etag") != etag)
            let stale = try await server.json("PATCH", "/v1/replies/\(firstID)", token: other.token, headers: [("If-Match", etag)], ["body": "덮어쓰기"])
            #expect(stale.status == 412 && stale.errorCode == "precondition_failed")
            #expect(try await server.json("GET", "/v1/replies/\(firstID)").object["body"] as? String == "파전집 위치 알려주세요", "a stale edit changes nothing")
            let notMine = try await server.json("PATCH", "/v1/replies/\(firstID)", token: author.token, ["body": "남의 댓글"])
            #expect(notMine.status == 403 && notMine.errorCode == "not_owner")
            let revisions = try await server.dependencies.database.query("SELECT body, version FROM reply_revisions WHERE reply_id = \(Int(firstID)!) ORDER BY id")
            #expect(try revisions.map { try $0.decode(String.self, "body") } == ["파전집 어디예요?"], "one revision per edit, holding the replaced version")

            // Deletes: a stranger may not, the author may (again and again), and the count follows.
            let stranger = try await server.anonymousAccount()
            let refused = try await server.json("DELETE", "/v1/replies/\(firstID)", token: stranger.token)
            #expect(refused.status == 403 && refused.errorCode == "not_owner")
            for _ in 0..<2 { #expect(try await server.json("DELETE", "/v1/replies/\(firstID)", token: other.token).status == 204) }
            #expect(try await server.json("GET", "/v1/replies/\(firstID)").status == 404)
            #expect(try await Self.replies(server, postID).compactMap { $0["id"] as? String } == [answer])
            #expect(try await Self.replyCount(server, postID) == 1)
            let gone = try await server.json("PATCH", "/v1/replies/\(firstID)", token: other.token, ["body": "되살리기"])
            #expect(gone.status == 404)
        }
    }

    @Test("bad input: empty, 1001 code points, NUL, control characters, no body, unknown or non-canonical ids, garbage cursors and limits")
    func badInput() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            for body in ["", "   \n ", String(repeating: "가", count: 1001), "a\u{0}b", "bell\u{7}"] {
                let response = try await Self.reply(server, author, to: postID, body)
                #expect(response.status == 422 && response.errorCode == "invalid_field", "\(body.prefix(10).debugDescription): \(response.status) \(response.text)")
            }
            #expect(try await Self.reply(server, author, to: postID, String(repeating: "가", count: 1000)).status == 201, "1000 code points fit")
            let noBody = try await server.json("POST", "/v1/posts/\(postID)/replies", token: author.token, [String: Any]())
            #expect(noBody.status == 422 && noBody.errorMessage?.contains("body") == true)
            let notJSON = try await server.request(
                "POST", "/v1/posts/\(postID)/replies", headers: [("Authorization", "Bearer \(author.token)")], body: Array("{".utf8)
            )
            #expect(notJSON.status == 400)
            for id in ["999999999999", "+\(postID)", "0\(postID)", "abc", "-1", "99999999999999999999999"] {
                #expect(try await Self.reply(server, author, to: id).status == 404, "post \(id)")
                #expect(try await server.json("GET", "/v1/posts/\(id)/replies").status == 404, "replies of \(id)")
                #expect(try await server.json("GET", "/v1/replies/\(id)").status == 404, "reply \(id)")
                #expect(try await server.json("PATCH", "/v1/replies/\(id)", token: author.token, ["body": "x"]).status == 404, "patch \(id)")
                #expect(try await server.json("DELETE", "/v1/replies/\(id)", token: author.token).status == 404, "delete \(id)")
            }
            for query in ["limit=0", "limit=-1", "limit=abc", "cursor=garbage", "cursor=%00"] {
                #expect(try await server.json("GET", "/v1/posts/\(postID)/replies?\(query)").status == 400, "\(query)")
            }
            #expect(try await server.json("GET", "/v1/posts/\(postID)/replies?limit=100000000000000000000").status == 200, "huge limits are clamped")
            let anonymous = try await server.json("POST", "/v1/posts/\(postID)/replies", ["body": "토큰 없이"])
            #expect(anonymous.status == 401 && anonymous.errorCode == "unauthenticated")
        }
    }

    @Test("a hidden, removed or deleted post takes its replies out of every view, and they come back with it")
    func followsThePost() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let replyID = try await Self.replyID(server, replier, to: postID)
            // The inbox's items, checked against its unread count (nothing is marked read here: every item is unread).
            let inbox = {
                let page = try await server.json("GET", "/v1/accounts/me/inbox", token: author.token)
                let ids = page.items.compactMap { $0["id"] as? String }
                #expect(page.object["unread"] as? Int == ids.count, "unread \(page.object["unread"] ?? "nil") for \(ids)")
                return ids
            }
            #expect(try await inbox() == [replyID])

            for (action, expected) in [("remove", "removed")] {
                let decided = try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": action])
                #expect(decided.status == 200 && (decided.object["post"] as? [String: Any])?["status"] as? String == expected)
            }
            #expect(try await server.json("GET", "/v1/posts/\(postID)/replies", token: replier.token).status == 404, "a stranger can't see the post")
            #expect(try await Self.replies(server, postID, token: author.token).isEmpty, "not even the post's author sees replies of a removed post")
            #expect(try await server.json("GET", "/v1/replies/\(replyID)", token: replier.token).status == 404, "nor the reply's author")
            #expect(try await inbox().isEmpty, "out of the inbox")
            let late = try await Self.reply(server, replier, to: postID)
            #expect(late.status == 404, "no replies to a post the caller can't see: \(late.text)")
            let ownLate = try await Self.reply(server, author, to: postID)
            #expect(ownLate.status == 403 && ownLate.errorCode == "forbidden", "nor to one not shown to everyone: \(ownLate.text)")
            #expect(try await Self.replies(server, postID, token: moderator.token).count == 1, "moderators still see them")

            let restored = try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "restore"])
            #expect(restored.status == 200)
            #expect(try await Self.replies(server, postID).compactMap { $0["id"] as? String } == [replyID], "back with the post")
            #expect(try await inbox() == [replyID])
            #expect(try await Self.replyCount(server, postID) == 1)

            #expect(try await server.json("DELETE", "/v1/posts/\(postID)", token: author.token).status == 204)
            #expect(try await server.json("GET", "/v1/posts/\(postID)/replies").status == 404)
            #expect(try await inbox().isEmpty)
            #expect(try await server.json("GET", "/v1/replies/\(replyID)", token: replier.token).status == 404)
        }
    }

    @Test("blocks leave a blocked author's replies out of lists and the inbox; own replies are not in one's inbox; bans refuse replying")
    func blocksAndBans() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let nice = try await server.anonymousAccount()
            let rude = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let niceReply = try await Self.replyID(server, nice, to: postID, "좋은 정보 감사합니다")
            let rudeReply = try await Self.replyID(server, rude, to: postID, "별로네요")
            _ = try await Self.replyID(server, author, to: postID, "제 글에 제 댓글")
            let inbox = try await server.json("GET", "/v1/accounts/me/inbox", token: author.token)
            #expect(inbox.items.compactMap { $0["id"] as? String } == [rudeReply, niceReply], "newest first, own reply left out")
            #expect((inbox.items.first?["post"] as? [String: Any])?["id"] as? String == postID)

            #expect(try await server.json("POST", "/v1/accounts/me/blocks", token: author.token, ["accountId": rude.id]).status == 204)
            #expect(try await server.json("GET", "/v1/accounts/me/inbox", token: author.token).items.compactMap { $0["id"] as? String } == [niceReply])
            #expect(!(try await Self.replies(server, postID, token: author.token)).contains { $0["id"] as? String == rudeReply })
            #expect(try await Self.replies(server, postID).contains { $0["id"] as? String == rudeReply }, "others still see it")
            #expect(try await server.json("DELETE", "/v1/accounts/me/blocks/\(rude.id)", token: author.token).status == 204)
            #expect(try await server.json("GET", "/v1/accounts/me/inbox", token: author.token).items.count == 2)

            let banned = try await server.json("POST", "/v1/moderation/accounts/\(rude.id)/ban", token: moderator.token, ["until": NSNull(), "reason": "욕설"])
            #expect(banned.status == 200)
            let refused = try await Self.reply(server, rude, to: postID)
            #expect(refused.status == 403 && refused.errorCode == "account_banned")
            let edit = try await server.json("PATCH", "/v1/replies/\(rudeReply)", token: rude.token, ["body": "수정"])
            #expect(edit.status == 403 && edit.errorCode == "account_banned")
            let report = try await server.json("POST", "/v1/replies/\(niceReply)/reports", token: rude.token, ["reason": "spam"])
            #expect(report.status == 403 && report.errorCode == "account_banned")
        }
    }

    @Test("an owner blocking 40 accounts, with 45 posts not shown: the inbox and its unread count hold exactly the shown replies of unblocked authors")
    func manyBlocksAndUnshownPosts() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let owner = try await server.anonymousAccount()
            let nice = try await server.anonymousAccount()
            let rude = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let database = server.dependencies.database
            let me = try #require(Int(owner.id))
            // 40 blocked accounts and 45 of the owner's posts that are not shown (removed, hidden, deleted), by SQL: the
            // count reads both lists into hashes, and must still leave out exactly what they name. (Few: these rows are
            // committed to the database every suite shares, and its plan tests read the planner's estimates of `blocks`.)
            _ = try await database.query(
                """
                WITH a AS (INSERT INTO accounts (display_name) SELECT 'blocked ' || i FROM generate_series(1, 40) AS i RETURNING id)
                INSERT INTO blocks (blocker_id, blocked_id) SELECT \(me), id FROM a
                """
            )
            _ = try await database.query(
                """
                INSERT INTO posts (author_id, region_id, weather_type, category, body, status, deleted_at)
                SELECT \(me), 1835848, 'rain', 'food', 'unshown ' || i, CASE WHEN i % 3 = 0 THEN 'removed' WHEN i % 3 = 1 THEN 'hidden' ELSE 'visible' END,
                       CASE WHEN i % 3 = 2 THEN now() END
                FROM generate_series(1, 45) AS i
                """
            )
            let shown = try #require(try await server.createPost(owner)["id"] as? String)
            let doomed = try #require(try await server.createPost(owner)["id"] as? String)
            var expected: [String] = []
            for round in 0..<3 {
                expected.insert(try await Self.replyID(server, nice, to: shown, "좋아요 \(round)"), at: 0)
                _ = try await Self.replyID(server, rude, to: shown, "별로 \(round)")
                _ = try await Self.replyID(server, nice, to: doomed, "곧 사라질 글 \(round)")
            }
            #expect(try await server.json("POST", "/v1/accounts/me/blocks", token: owner.token, ["accountId": rude.id]).status == 204)
            let removed = try await server.json("POST", "/v1/moderation/posts/\(doomed)/decision", token: moderator.token, ["action": "remove"])
            #expect(removed.status == 200)
            let inbox = try await server.json("GET", "/v1/accounts/me/inbox", token: owner.token)
            #expect(inbox.items.compactMap { $0["id"] as? String } == expected)
            #expect(inbox.object["unread"] as? Int == 3, "\(inbox.text)")
            // The post comes back: its replies count again.
            #expect(try await server.json("POST", "/v1/moderation/posts/\(doomed)/decision", token: moderator.token, ["action": "restore"]).status == 200)
            #expect(try await server.json("GET", "/v1/accounts/me/inbox", token: owner.token).object["unread"] as? Int == 6)
        }
    }

    @Test("Idempotency-Key: a replay answers the first reply, a different body under the same key is a conflict")
    func idempotency() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let key = [("Idempotency-Key", UUID().uuidString)]
            let answers = try await withThrowingTaskGroup(of: CurlResponse.self) { group in
                for _ in 0..<8 { group.addTask { try await Self.reply(server, replier, to: postID, "한 번만", headers: key) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.status == 201 }, "\(answers.map(\.status))")
            #expect(Set(answers.compactMap { $0.object["id"] as? String }).count == 1, "one reply for eight requests with one key")
            #expect(try await Self.replies(server, postID).count == 1)
            let conflict = try await Self.reply(server, replier, to: postID, "다른 내용", headers: key)
            #expect(conflict.status == 409 && conflict.errorCode == "idempotency_conflict")
            let short = try await Self.reply(server, replier, to: postID, headers: [("Idempotency-Key", "short")])
            #expect(short.status == 422)
        }
    }

    @Test("the reply limit holds under a parallel burst: anonymous 10 in 10 minutes, however many arrive at once")
    func burstAgainstTheLimit() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let statuses = try await withThrowingTaskGroup(of: CurlResponse.self) { group in
                for i in 0..<40 { group.addTask { try await Self.reply(server, replier, to: postID, "연속 \(i)") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0.status == 201 }.count == 10, "\(statuses.map(\.status).sorted())")
            let limited = statuses.filter { $0.status == 429 }
            #expect(limited.count == 30)
            #expect(limited.allSatisfy { $0.errorCode == "rate_limited" && $0.header("retry-after") != nil })
            #expect(try await Self.replies(server, postID).count == 10)
            #expect(try await Self.replyCount(server, postID) == 10)
        }
    }

    @Test("50 replies to one post at once: all kept, listed in the order they were made, replyCount exact")
    func fiftyAtOnce() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            var repliers: [TestAccount] = []
            for _ in 0..<10 { repliers.append(try await server.anonymousAccount()) }
            let made = try await withThrowingTaskGroup(of: String.self) { group in
                for i in 0..<50 {
                    let account = repliers[i % repliers.count]
                    group.addTask {
                        let response = try await Self.reply(server, account, to: postID, "동시에 \(i)")
                        try #require(response.status == 201, "\(response.text)")
                        return try #require(response.object["id"] as? String)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(made.count == 50)
            let listed = try await Self.replies(server, postID).compactMap { $0["id"] as? String }
            #expect(Set(listed) == Set(made), "every reply kept")
            #expect(listed == listed.sorted { Int($0)! < Int($1)! }, "in the order they were made")
            #expect(try await Self.replyCount(server, postID) == 50)
            let inbox = try await server.json("GET", "/v1/accounts/me/inbox?limit=100", token: author.token)
            #expect(inbox.object["unread"] as? Int == 50, "the unread count counts every concurrent reply: \(inbox.object["unread"] ?? "nil")")
            #expect(inbox.object["unreadCapped"] as? Bool == false)
        }
    }

    @Test("a post removed while replies are in flight never shows a visible reply: each is refused, or out of view with it")
    func removedWhileInFlight() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            for round in 0..<5 {
                let postID = try #require(try await server.createPost(author, body: "곧 지워질 글 \(round)")["id"] as? String)
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for i in 0..<10 { group.addTask { try await Self.reply(server, replier, to: postID, "경주 \(i)").status } }
                    group.addTask {
                        let decided = try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "remove"])
                        return decided.status == 200 ? 0 : decided.status
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { [0, 201, 404].contains($0) }, "round \(round): \(statuses)")
                #expect(try await server.json("GET", "/v1/posts/\(postID)/replies").status == 404)
                #expect(try await Self.replies(server, postID, token: author.token).isEmpty)
                #expect(try await Self.replies(server, postID, token: moderator.token).count == statuses.filter { $0 == 201 }.count,
                        "moderators see exactly the replies that were accepted")
                let inbox = try await server.json("GET", "/v1/accounts/me/inbox?limit=100", token: author.token).items
                #expect(!inbox.contains { $0["postId"] as? String == postID }, "round \(round): a reply of a removed post in the inbox")
            }
        }
    }

    @Test("replies walked to their end across inserts made between pages: none twice, none skipped, new ones at the end")
    func keysetWalk() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            var made: [String] = []
            for i in 0..<23 { made.append(try await Self.replyID(server, replier, to: postID, "답 \(i)")) }
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await server.json("GET", "/v1/posts/\(postID)/replies?limit=5" + (cursor.map { "&cursor=\($0)" } ?? ""))
                try #require(page.status == 200)
                seen += page.items.compactMap { $0["id"] as? String }
                cursor = page.object["nextCursor"] as? String
                pages += 1
                if pages <= 3 { made.append(try await Self.replyID(server, replier, to: postID, "사이에 \(pages)")) }
                if pages == 2 {
                    // A delete between pages takes one out without shifting the rest.
                    #expect(try await server.json("DELETE", "/v1/replies/\(made[1])", token: replier.token).status == 204)
                    made.remove(at: 1)
                }
            } while cursor != nil && pages < 50
            #expect(Set(seen).count == seen.count, "a reply twice")
            let deletedEarly = seen.filter { !made.contains($0) }
            #expect(deletedEarly.count <= 1, "only the reply deleted after it was read may be in the walk")
            #expect(seen.filter { made.contains($0) } == made, "every reply, oldest first, the ones added meanwhile at the end")
        }
    }

    @Test("the inbox: newest first with its post's id and title, keyset pages, unread and read up to, never backwards")
    func inbox() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let stranger = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author, title: "비 오는 날 파전")["id"] as? String)
            var made: [String] = []
            for i in 0..<7 { made.append(try await Self.replyID(server, replier, to: postID, "답 \(i)")) }
            let first = try await server.json("GET", "/v1/accounts/me/inbox?limit=3", token: author.token)
            #expect(first.items.compactMap { $0["id"] as? String } == Array(made.reversed().prefix(3)))
            #expect((first.items.first?["post"] as? [String: Any])?["title"] as? String == "비 오는 날 파전")
            #expect(first.object["unread"] as? Int == 7)
            let cursor = try #require(first.object["nextCursor"] as? String)
            let second = try await server.json("GET", "/v1/accounts/me/inbox?limit=3&cursor=\(cursor)", token: author.token)
            #expect(second.items.compactMap { $0["id"] as? String } == Array(made.reversed().dropFirst(3).prefix(3)))

            let read = try await server.json("POST", "/v1/accounts/me/inbox/read", token: author.token, ["upTo": made[4]])
            #expect(read.status == 200 && read.object["unread"] as? Int == 2, "\(read.text)")
            let back = try await server.json("POST", "/v1/accounts/me/inbox/read", token: author.token, ["upTo": made[1]])
            #expect(back.object["unread"] as? Int == 2, "the marker never moves back")
            for bad in [["upTo": "abc"], ["upTo": "+\(made[0])"], [:], ["upTo": "a\u{0}"]] as [[String: Any]] {
                let refused = try await server.json("POST", "/v1/accounts/me/inbox/read", token: author.token, bad)
                #expect(refused.status == 422 && refused.errorCode == "invalid_field", "\(bad): \(refused.status)")
            }
            let foreign = try await server.json("POST", "/v1/accounts/me/inbox/read", token: stranger.token, ["upTo": made[6]])
            #expect(foreign.status == 422, "a reply to someone else's post is not in your inbox")
            #expect(try await server.json("GET", "/v1/accounts/me/inbox", token: stranger.token).items.isEmpty)
            #expect(try await server.json("GET", "/v1/accounts/me/inbox").status == 401)
            #expect(try await server.json("GET", "/v1/accounts/me/inbox?cursor=zzz", token: author.token).status == 400)

            // Concurrent replies while marking read: the count is exact afterwards.
            let newest = made[6]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<12 { group.addTask { _ = try await Self.replyID(server, replier, to: postID, "또 \(i)") } }
                group.addTask { _ = try await server.json("POST", "/v1/accounts/me/inbox/read", token: author.token, ["upTo": newest]) }
                try await group.waitForAll()
            }
            #expect(try await server.json("GET", "/v1/accounts/me/inbox", token: author.token).object["unread"] as? Int == 12)
        }
    }
}
