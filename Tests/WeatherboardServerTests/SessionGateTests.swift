@testable import Board
import Database
import Foundation
import Testing

/// Issue #33: a read's token is checked inside the read's own statement (`SessionGate`). A signed-in read is one
/// statement, as an anonymous one; a refused token is 401 and its statement touches none of the read's tables.
@Suite("A read's token, checked in the read's own statement")
struct SessionGateTests {
    /// The fewest statements the server's pool ran for `request` over `tries`: the server's background work (the
    /// purger) runs on the same pool and can only add.
    static func fewestStatements(_ server: TestServer, tries: Int = 3, _ request: () async throws -> Void) async throws -> Int {
        var fewest = Int.max
        for _ in 0..<tries {
            let before = server.dependencies.database.statementCount
            try await request()
            fewest = min(fewest, server.dependencies.database.statementCount - before)
        }
        return fewest
    }

    @Test("a signed-in read is one statement, as a token-less one: the post, the list, the list of a post's replies (two, as without a token) and the inbox (two); staff's read of a post runs again for them")
    func oneStatementPerRead() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let member = try await server.anonymousAccount()
            let post = try await server.createPost(author, body: "세션 검사 한 번 \(UUID().uuidString)")
            let id = try #require(post["id"] as? String)
            #expect(try await server.json("POST", "/v1/posts/\(id)/replies", token: member.token, ["body": "댓글"]).status == 201)
            let (admin, _) = try await server.staff()

            let shapes: [(String, Int)] = [
                ("/v1/posts/\(id)", 1), ("/v1/posts?limit=5", 1), ("/v1/posts?limit=5&authorId=\(author.id)", 1),
                ("/v1/posts/\(id)/replies", 2),
            ]
            for (path, statements) in shapes {
                let anonymous = try await Self.fewestStatements(server) { () async throws -> Void in #expect(try await server.json("GET", path).status == 200) }
                let signedIn = try await Self.fewestStatements(server) { () async throws -> Void in #expect(try await server.json("GET", path, token: member.token).status == 200) }
                #expect(anonymous == statements, "\(path) without a token")
                #expect(signedIn == statements, "\(path) with a member's token ran \(signedIn) statements")
            }
            let inbox = try await Self.fewestStatements(server) { () async throws -> Void in
                let page = try await server.json("GET", "/v1/accounts/me/inbox", token: author.token)
                #expect(page.status == 200)
                #expect(page.items.count == 1, "the reply to the author's post is in its inbox")
            }
            #expect(inbox == 2, "the inbox's page and its unread count, the token checked in the first")
            let staff = try await Self.fewestStatements(server) { () async throws -> Void in #expect(try await server.json("GET", "/v1/posts/\(id)", token: admin.token).status == 200) }
            #expect(staff == 2, "staff's read runs again with the staff view")

            // A route that reads through no gate still checks the token: a statement of its own.
            let checks = try await server.metric("auth_session_checks_total", labels: "how=\"statement\"")
            #expect(try await server.json("GET", "/v1/categories", token: member.token).status == 200)
            #expect(try await server.metric("auth_session_checks_total", labels: "how=\"statement\"") == checks + 1)
        }
    }

    @Test("a revoked token is 401 on every read shape and on a route that reads nothing, one statement each, counted in auth_refused_total")
    func revokedTokenIsRefused() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let post = try await server.createPost(author, body: "로그아웃한 토큰 \(UUID().uuidString)")
            let id = try #require(post["id"] as? String)
            let gone = try await server.anonymousAccount()
            #expect(try await server.json("DELETE", "/v1/sessions/current", token: gone.token).status == 204)

            for path in ["/v1/posts/\(id)", "/v1/posts?limit=5", "/v1/posts/\(id)/replies", "/v1/accounts/me/inbox", "/v1/categories", "/v1/posts/not-an-id", "/v1/posts?limit=-5"] {
                let refused = try await server.metric("auth_refused_total")
                let statements = try await Self.fewestStatements(server) { () async throws -> Void in
                    let response = try await server.json("GET", path, token: gone.token)
                    #expect(response.status == 401, "\(path): \(response.status) \(response.text)")
                    #expect(response.errorCode == "unauthenticated", "\(path)")
                }
                #expect(statements == 1, "\(path): the refused token's one statement, and no read after it")
                #expect(try await server.metric("auth_refused_total") == refused + 3, "\(path): three tries, three refusals")
            }
            // Forged, malformed and empty tokens: refused before any statement.
            for token in ["wb_" + String(repeating: "A", count: 43), "wb_\u{0}", "not-a-token", String(repeating: "x", count: 5000)] {
                let response = try await server.json("GET", "/v1/posts?limit=1", token: token)
                #expect(response.status == 401, "\(token.prefix(12)): \(response.status)")
            }
        }
    }

    @Test("the gated statement of an unknown token reads none of the read's tables: every scan of them is never executed")
    func refusedStatementReadsNothing() async throws {
        try await TestDatabase.migrated.value
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        let pending = Viewer(gate: SessionGate(tokenHash: String(repeating: "0", count: 64), store: PostgresAccountStore(database: pool), counts: SessionCheckCounts()))
        var fit = PostQuery(weatherType: .rain, limit: 21)
        fit.sort = .fit
        fit.fitBand = .mild
        let shapes: [(String, SQLQuery)] = [
            ("the post", PostgresPostStore.byID(1, viewer: Visibility(pending).account)),
            ("the list", PostgresPostStore.withMedia(PostgresPostStore.listQuery(PostQuery(limit: 21), viewer: pending), viewer: Visibility(pending).account)),
            ("the list of one author", PostgresPostStore.withMedia(PostgresPostStore.listQuery(PostQuery(authorID: 1, limit: 21), viewer: pending), viewer: Visibility(pending).account)),
            ("the feed's fit group", PostgresPostStore.withMedia(PostgresPostStore.fitGroupQuery(.sameBand, outside: .mild, fit, viewer: pending), viewer: Visibility(pending).account, sort: .fit)),
            ("a post's access", PostgresPostStore.accessQuery(1)),
            ("the inbox", PostgresReplyStore.inboxQuery(of: SessionGate.account, before: nil, limit: 21)),
        ]
        let readTables = ["posts", "replies", "media", "blocks", "helpful_marks", "regions"]
        try await pool.withConnection { connection in
            for (name, query) in shapes {
                let gated = SessionGate.gated(query, tokenHash: String(repeating: "0", count: 64))
                #expect(try connection.query(gated).isEmpty, "\(name): no row for an unknown token")
                let plan = try ListPlanTests.genericPlan(gated, connection: connection)
                let scans = plan.split(separator: "\n").filter { line in readTables.contains { line.contains(" on \($0) ") || line.hasSuffix(" on \($0)") } }
                #expect(!scans.isEmpty, "\(name): the plan scans the read's tables\n\(plan)")
                for scan in scans { #expect(scan.contains("never executed"), "\(name): \(scan)\n\(plan)") }
            }
        }
    }
}
