import CurlClient
import Database
import Foundation
import Testing

/// Issue #33: a write's token is checked by the first statement of the write's own transaction (`Caller`), which
/// holds the session's and the account's rows until the write commits: no statement of its own before it, and a
/// logout, a ban or a deletion either waits for the write or is seen by it.
@Suite("A write's token, checked in the write's own transaction")
struct WriteSessionCheckTests {
    struct Counts: Equatable {
        var statement: Double
        var inWrite: Double
        var refused: Double
    }

    static func counts(_ server: TestServer) async throws -> Counts {
        Counts(
            statement: try await server.metric("auth_session_checks_total", labels: "how=\"statement\""),
            inWrite: try await server.metric("auth_session_checks_total", labels: "how=\"in_write\""),
            refused: try await server.metric("auth_refused_total")
        )
    }

    @Test("a signed-in write checks its token inside its own transaction, never by a statement of its own first: replies, edits, deletes, helpful marks, blocks, the inbox marker")
    func checkedInsideTheWrite() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let member = try await server.anonymousAccount()
            let other = try await server.anonymousAccount()
            let post = try #require(try await server.createPost(author, body: "쓰기 안의 세션 검사 \(UUID().uuidString)")["id"] as? String)
            let own = try #require(try await server.createPost(author, body: "지울 글 \(UUID().uuidString)")["id"] as? String)
            let reply = try await server.json("POST", "/v1/posts/\(post)/replies", token: member.token, ["body": "첫 댓글"])
            let replyID = try #require(reply.object["id"] as? String)

            let writes: [(String, String, String, Any?, Int)] = [
                (member.token, "POST", "/v1/posts/\(post)/replies", ["body": "두 번째 댓글"], 201),
                (member.token, "PATCH", "/v1/replies/\(replyID)", ["body": "고친 댓글"], 200),
                (member.token, "PUT", "/v1/posts/\(post)/helpful", nil, 200),
                (member.token, "DELETE", "/v1/posts/\(post)/helpful", nil, 200),
                (member.token, "POST", "/v1/accounts/me/blocks", ["accountId": other.id], 204),
                (member.token, "DELETE", "/v1/accounts/me/blocks/\(other.id)", nil, 204),
                (author.token, "PATCH", "/v1/posts/\(own)", ["body": "고친 글"], 200),
                (author.token, "POST", "/v1/accounts/me/inbox/read", ["upTo": replyID], 200),
                (member.token, "DELETE", "/v1/replies/\(replyID)", nil, 204),
                (author.token, "DELETE", "/v1/posts/\(own)", nil, 204),
            ]
            for (token, method, path, body, status) in writes {
                let before = try await Self.counts(server)
                let response = try await server.json(method, path, token: token, body)
                #expect(response.status == status, "\(method) \(path): \(response.status) \(response.text)")
                let after = try await Self.counts(server)
                #expect(after.statement == before.statement, "\(method) \(path): no session statement of its own")
                #expect(after.inWrite == before.inWrite + 1, "\(method) \(path): checked inside the write")
            }
            // A post's create looks up its weather outside its transaction, so it checks the token first, by a
            // statement of its own (a refused token spends no upstream call), and again inside.
            let before = try await Self.counts(server)
            _ = try await server.createPost(member, body: "날씨를 먼저 \(UUID().uuidString)")
            let after = try await Self.counts(server)
            #expect(after.statement == before.statement + 1)
        }
    }

    @Test("a revoked token is 401 on every write (all 28 write routes, 30 requests), counted in auth_refused_total, and writes nothing")
    func revokedTokenWritesNothing() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let post = try #require(try await server.createPost(author, body: "로그아웃한 쓰기 \(UUID().uuidString)")["id"] as? String)
            let reply = try await server.json("POST", "/v1/posts/\(post)/replies", token: author.token, ["body": "댓글"])
            let replyID = try #require(reply.object["id"] as? String)
            let gone = try await server.anonymousAccount()
            let goneID = try #require(Int(gone.id))
            let mine = try #require(try await server.createPost(gone, body: "곧 로그아웃 \(UUID().uuidString)")["id"] as? String)
            #expect(try await server.json("DELETE", "/v1/sessions/current", token: gone.token).status == 204)

            let writes: [(String, String, Any?)] = [
                ("POST", "/v1/accounts", nil),
                ("POST", "/v1/sessions", ["username": "nobody_\(UUID().uuidString.prefix(8))", "password": "long enough password"]),
                ("DELETE", "/v1/sessions/current", nil),
                ("DELETE", "/v1/accounts/me", nil),
                ("POST", "/v1/accounts/me/credentials", ["username": "ghost_\(UUID().uuidString.prefix(8))", "password": "long enough password"]),
                ("POST", "/v1/accounts/me/blocks", ["accountId": author.id]),
                ("DELETE", "/v1/accounts/me/blocks/\(author.id)", nil),
                ("POST", "/v1/posts", ["weatherType": "rain", "category": "food", "body": "유령 글", "regionId": "1835848"]),
                ("PATCH", "/v1/posts/\(mine)", ["body": "유령 수정"]),
                ("DELETE", "/v1/posts/\(mine)", nil),
                ("PUT", "/v1/posts/\(post)/helpful", nil),
                ("DELETE", "/v1/posts/\(post)/helpful", nil),
                ("POST", "/v1/posts/\(post)/replies", ["body": "유령 댓글"]),
                ("PATCH", "/v1/replies/\(replyID)", ["body": "유령 수정"]),
                ("DELETE", "/v1/replies/\(replyID)", nil),
                ("POST", "/v1/posts/\(post)/reports", ["reason": "spam"]),
                ("POST", "/v1/replies/\(replyID)/reports", ["reason": "spam"]),
                ("POST", "/v1/accounts/me/inbox/read", ["upTo": replyID]),
                ("POST", "/v1/moderation/posts/\(post)/decision", ["action": "remove"]),
                ("POST", "/v1/moderation/replies/\(replyID)/decision", ["action": "remove"]),
                ("POST", "/v1/moderation/accounts/\(author.id)/ban", ["reason": "x"]),
                ("DELETE", "/v1/moderation/accounts/\(author.id)/ban", nil),
                ("POST", "/v1/media", nil),
                ("PATCH", "/v1/media/1", ["alt": "x"]),
                ("DELETE", "/v1/media/1", nil),
                ("PUT", "/v1/accounts/me/devices/\(String(repeating: "ab", count: 32))", ["environment": "sandbox", "timeZone": "Asia/Seoul"]),
                ("DELETE", "/v1/accounts/me/devices/\(String(repeating: "ab", count: 32))", nil),
                ("PATCH", "/v1/accounts/me/notifications", ["replies": false]),
                // Bad input first: the token is still checked, and the refusal wins.
                ("POST", "/v1/posts/\(post)/replies", ["body": ""]),
                ("PATCH", "/v1/posts/not-an-id", ["body": "x"]),
            ]
            for (method, path, body) in writes {
                let refused = try await server.metric("auth_refused_total")
                let response = try await server.json(method, path, token: gone.token, body)
                #expect(response.status == 401, "\(method) \(path): \(response.status) \(response.text)")
                #expect(response.errorCode == "unauthenticated", "\(method) \(path)")
                #expect(try await server.metric("auth_refused_total") == refused + 1, "\(method) \(path)")
            }
            let database = server.dependencies.database
            #expect(try await database.count("SELECT count(*) AS n FROM posts WHERE author_id = \(goneID) AND deleted_at IS NULL AND NOT edited") == 1)
            #expect(try await database.count("SELECT count(*) AS n FROM replies WHERE author_id = \(goneID) OR deleted_at IS NOT NULL AND post_id = \(Int(post)!)") == 0)
            #expect(try await database.count("SELECT count(*) AS n FROM helpful_marks WHERE account_id = \(goneID)") == 0)
            #expect(try await database.count("SELECT count(*) AS n FROM blocks WHERE blocker_id = \(goneID)") == 0)
            #expect(try await database.count("SELECT count(*) AS n FROM reports WHERE reporter_id = \(goneID)") == 0)
            #expect(try await database.count("SELECT count(*) AS n FROM devices WHERE account_id = \(goneID)") == 0)
            #expect(try await database.count("SELECT count(*) AS n FROM notification_settings WHERE account_id = \(goneID)") == 0)
            #expect(try await database.count("SELECT count(*) AS n FROM accounts WHERE id = \(goneID) AND kind = 'anonymous' AND deleted_at IS NULL") == 1)
        }
    }

    /// A reply sent while `revocation` (statements on the member's account id) is under way in a transaction of the
    /// test's own: the reply's check waits on its locks, then the revocation commits. Answers the reply's response;
    /// checks that the member has no reply.
    static func replyRacing(_ revocation: @Sendable (Int) -> [SQLQuery], server: TestServer) async throws -> CurlResponse {
        let author = try await server.anonymousAccount()
        let member = try await server.anonymousAccount()
        let memberID = try #require(Int(member.id))
        let post = try #require(try await server.createPost(author, body: "경주 \(UUID().uuidString)")["id"] as? String)
        let gate = try await GatedTransaction.start(revocation(memberID), on: server.dependencies.database)
        let reply = Task { try await server.json("POST", "/v1/posts/\(post)/replies", token: member.token, ["body": "늦은 댓글"]) }
        #expect(try await waitForLockWaiter("%FOR SHARE OF s, a%", behind: gate))
        try await gate.open()
        let response = try await reply.value
        #expect(try await server.dependencies.database.count("SELECT count(*) AS n FROM replies WHERE author_id = \(memberID)") == 0)
        return response
    }

    @Test("a logout that commits while a reply waits on the session is seen by the reply: 401, no reply")
    func logoutRacingAReply() async throws {
        try await withTestServer { server in
            let response = try await Self.replyRacing({ ["UPDATE sessions SET revoked_at = now() WHERE account_id = \($0) AND revoked_at IS NULL"] }, server: server)
            #expect(response.status == 401, "\(response.status) \(response.text)")
        }
    }

    @Test("a ban that commits while a reply waits on the account is seen by the reply: 403 account_banned, no reply; a reply under way when a ban starts makes the ban wait")
    func banRacingAReply() async throws {
        try await withTestServer { server in
            let response = try await Self.replyRacing(
                { ["UPDATE accounts SET banned = true, banned_until = NULL, ban_reason = 'test' WHERE id = \($0)"] }, server: server
            )
            #expect(response.status == 403, "\(response.status) \(response.text)")
            #expect(response.errorCode == "account_banned")

            // The other way round: a write that holds the account (its check ran) makes a ban wait for its commit.
            let writer = try await server.anonymousAccount()
            let writerID = try #require(Int(writer.id))
            let session = try await server.dependencies.database.query(
                "SELECT id FROM sessions WHERE account_id = \(writerID) AND revoked_at IS NULL"
            )[0].decode(Int.self, "id")
            let write = try await GatedTransaction.start(
                [
                    "SELECT s.id FROM sessions s JOIN accounts a ON a.id = s.account_id WHERE s.id = \(session) FOR SHARE OF s, a"
                ], on: server.dependencies.database
            )
            let banning = Task { try await server.dependencies.database.execute("UPDATE accounts SET banned = true WHERE id = \(writerID) AND banned = false") }
            #expect(try await waitForLockWaiter("%UPDATE accounts SET banned = true%", behind: write))
            try await write.open()
            #expect(try await banning.value == 1)
        }
    }

    @Test("bursts of one account's writes that hold its rows never deadlock: 20 inbox markers and 20 helpful marks at once")
    func burstsOfOneAccount() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let member = try await server.anonymousAccount()
            let post = try #require(try await server.createPost(author, body: "한꺼번에 \(UUID().uuidString)")["id"] as? String)
            var replyIDs: [String] = []
            for index in 0..<5 {
                let reply = try await server.json("POST", "/v1/posts/\(post)/replies", token: member.token, ["body": "댓글 \(index)"])
                replyIDs.append(try #require(reply.object["id"] as? String))
            }
            let ids = replyIDs
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await server.json("POST", "/v1/accounts/me/inbox/read", token: author.token, ["upTo": ids[index % ids.count]]).status
                    }
                    group.addTask {
                        try await server.json(index.isMultiple(of: 2) ? "PUT" : "DELETE", "/v1/posts/\(post)/helpful", token: member.token).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == 40)
            #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses.sorted())")
            let inbox = try await server.json("GET", "/v1/accounts/me/inbox", token: author.token)
            #expect(inbox.object["unread"] as? Int == 0, "the marker ends at the newest of the replies marked")
        }
    }
}
