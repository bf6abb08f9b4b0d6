import CurlClient
import Database
import Foundation
import Testing

@Suite("Accounts and sessions")
struct AccountsTests {
    @Test("an anonymous account is created with a wb_ token and a contract-shaped account")
    func createAnonymous() async throws {
        try await withTestServer { server in
            let response = try await server.json("POST", "/v1/accounts")
            #expect(response.status == 201)
            let token = try #require(response.object["token"] as? String)
            #expect(token.hasPrefix("wb_"))
            #expect(token.count >= 3 + 22)
            let account = try #require(response.object["account"] as? [String: Any])
            #expect(account["kind"] as? String == "anonymous")
            #expect(account["role"] as? String == "member")
            #expect(account["banned"] as? Bool == false)
            #expect(account.keys.contains("username") && account["username"] is NSNull)
            #expect(account.keys.contains("bannedUntil") && account["bannedUntil"] is NSNull)
            #expect((account["createdAt"] as? String)?.hasSuffix("Z") == true)
            #expect(account["id"] is String)

            let me = try await server.json("GET", "/v1/accounts/me", token: token)
            #expect(me.status == 200)
            #expect(me.object["id"] as? String == account["id"] as? String)
        }
    }

    @Test("an Idempotency-Key replay answers 200 with the same account and a fresh token; both tokens work")
    func idempotentCreation() async throws {
        try await withTestServer { server in
            let key = UUID().uuidString
            let first = try await server.json("POST", "/v1/accounts", headers: [("Idempotency-Key", key)])
            let second = try await server.json("POST", "/v1/accounts", headers: [("Idempotency-Key", key)])
            #expect(first.status == 201)
            #expect(second.status == 200)
            let firstAccount = first.object["account"] as? [String: Any]
            let secondAccount = second.object["account"] as? [String: Any]
            #expect(firstAccount?["id"] as? String == secondAccount?["id"] as? String)
            let firstToken = try #require(first.object["token"] as? String)
            let secondToken = try #require(second.object["token"] as? String)
            #expect(firstToken != secondToken)
            #expect(try await server.json("GET", "/v1/accounts/me", token: firstToken).status == 200)
            #expect(try await server.json("GET", "/v1/accounts/me", token: secondToken).status == 200)
        }
    }

    @Test("missing, malformed, unknown and revoked tokens are 401 unauthenticated")
    func unauthenticated() async throws {
        try await withTestServer { server in
            let missing = try await server.json("GET", "/v1/accounts/me")
            #expect(missing.status == 401)
            #expect(missing.errorCode == "unauthenticated")
            #expect(try await server.json("GET", "/v1/accounts/me", token: "garbage").errorCode == "unauthenticated")
            #expect(try await server.json("GET", "/v1/accounts/me", token: "wb_" + String(repeating: "A", count: 36)).status == 401)
            let account = try await server.anonymousAccount()
            let logout = try await server.json("DELETE", "/v1/sessions/current", token: account.token)
            #expect(logout.status == 204)
            let after = try await server.json("GET", "/v1/accounts/me", token: account.token)
            #expect(after.status == 401)
            #expect(after.errorCode == "unauthenticated")
        }
    }

    @Test("upgrading keeps the id and the posts; the old token stops working")
    func upgrade() async throws {
        try await withTestServer { server in
            let anonymous = try await server.anonymousAccount()
            let post = try await server.createPost(anonymous)
            let username = "Upgrader_\(UInt32.random(in: 0...UInt32.max))"
            let response = try await server.json(
                "POST", "/v1/accounts/me/credentials", token: anonymous.token, ["username": username, "password": "a long enough passphrase"]
            )
            #expect(response.status == 200)
            let account = try #require(response.object["account"] as? [String: Any])
            #expect(account["id"] as? String == anonymous.id)
            #expect(account["kind"] as? String == "registered")
            #expect(account["username"] as? String == username.lowercased())
            let newToken = try #require(response.object["token"] as? String)
            #expect(try await server.json("GET", "/v1/accounts/me", token: anonymous.token).status == 401)
            let mine = try await server.json("GET", "/v1/accounts/me/posts", token: newToken)
            #expect(mine.status == 200)
            #expect(mine.items.map { $0["id"] as? String } == [post["id"] as? String])
            #expect(mine.items.first?["isMine"] as? Bool == true)

            // Registering twice, and taking a taken name.
            let again = try await server.json("POST", "/v1/accounts/me/credentials", token: newToken, ["username": "other_name_1", "password": "a long enough passphrase"])
            #expect(again.status == 409)
            #expect(again.errorCode == "already_registered")
            let other = try await server.anonymousAccount()
            let taken = try await server.json("POST", "/v1/accounts/me/credentials", token: other.token, ["username": username.uppercased(), "password": "another long passphrase"])
            #expect(taken.status == 409)
            #expect(taken.errorCode == "username_taken")
        }
    }

    @Test(
        "bad usernames and weak passwords are 422 naming the field",
        arguments: [
            ("ab", "a long enough passphrase", "username"),
            ("has space", "a long enough passphrase", "username"),
            ("한글이름", "a long enough passphrase", "username"),
            (String(repeating: "a", count: 31), "a long enough passphrase", "username"),
            ("good_name", "short", "password"),
            ("good_name", String(repeating: "x", count: 201), "password"),
            ("good_name", "aaaaaaaaaaaa", "password"),
        ]
    )
    func invalidCredentials(_ username: String, _ password: String, _ field: String) async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let response = try await server.json("POST", "/v1/accounts/me/credentials", token: account.token, ["username": username, "password": password])
            #expect(response.status == 422)
            #expect(response.errorCode == "invalid_field")
            #expect(response.errorMessage?.hasPrefix(field) == true)
        }
    }

    @Test("login adds a device; unknown user and wrong password get the same 401; other tokens keep working")
    func login() async throws {
        try await withTestServer { server in
            let (account, username, password) = try await server.registeredAccount()
            let login = try await server.json("POST", "/v1/sessions", ["username": username.uppercased(), "password": password])
            #expect(login.status == 201)
            #expect((login.object["account"] as? [String: Any])?["id"] as? String == account.id)
            let second = try #require(login.object["token"] as? String)
            #expect(try await server.json("GET", "/v1/accounts/me", token: second).status == 200)
            #expect(try await server.json("GET", "/v1/accounts/me", token: account.token).status == 200)

            let wrong = try await server.json("POST", "/v1/sessions", ["username": username, "password": "not the password"])
            let unknown = try await server.json("POST", "/v1/sessions", ["username": "nobody_\(UInt32.random(in: 0...UInt32.max))", "password": "not the password"])
            #expect(wrong.status == 401)
            #expect(unknown.status == 401)
            #expect(wrong.errorCode == "invalid_credentials")
            #expect(wrong.text == unknown.text)
        }
    }

    @Test("repeated failed logins for one username answer 429 with Retry-After")
    func loginRateLimit() async throws {
        try await withTestServer { server in
            let (_, username, password) = try await server.registeredAccount()
            var statuses: [Int] = []
            for _ in 0..<11 {
                statuses.append(try await server.json("POST", "/v1/sessions", ["username": username, "password": "wrong password!"]).status)
            }
            #expect(statuses.prefix(10).allSatisfy { $0 == 401 })
            #expect(statuses.last == 429)
            // Even the right password is refused while the limit holds.
            let limited = try await server.json("POST", "/v1/sessions", ["username": username, "password": password])
            #expect(limited.status == 429)
            #expect(limited.errorCode == "rate_limited")
            #expect(Int(limited.header("retry-after") ?? "") ?? 0 >= 1)
        }
    }

    @Test("anonymous account creation is limited per client IP, and the limit is shared by two server processes")
    func accountCreationLimitSharedAcrossInstances() async throws {
        // A trusted proxy lets the test present its own client address to both instances.
        // Addresses of this test alone (the limit's window outlives a test run on a reused database).
        let ip = TestClient.randomAddress()
        let other = TestClient.randomAddress()
        try await withTestServer(configure: { $0.trustedProxies = ["127.0.0.1"] }) { first in
            try await withTestServer(configure: { $0.trustedProxies = ["127.0.0.1"] }) { second in
                var statuses: [Int] = []
                for i in 0..<31 {
                    let server = i % 2 == 0 ? first : second
                    statuses.append(try await server.json("POST", "/v1/accounts", headers: [("X-Forwarded-For", "203.0.113.9, \(ip)")]).status)
                }
                #expect(statuses.prefix(30).allSatisfy { $0 == 201 })
                #expect(statuses.last == 429)
                // Another client address is unaffected; an untrusted peer's X-Forwarded-For is ignored.
                #expect(try await first.json("POST", "/v1/accounts", headers: [("X-Forwarded-For", other)]).status == 201)
            }
        }
    }

    @Test("RATE_LIMITS=off disables the limits")
    func rateLimitsOff() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let (_, username, _) = try await server.registeredAccount()
            for _ in 0..<12 {
                #expect(try await server.json("POST", "/v1/sessions", ["username": username, "password": "wrong password!"]).status == 401)
            }
        }
    }

    @Test("no token or password is stored in plain text; passwords use a self-describing scrypt hash")
    func secretsAtRest() async throws {
        try await withTestServer { server in
            let (account, username, password) = try await server.registeredAccount()
            let database = server.dependencies.database
            let id = Int(account.id)!
            let hash = try await database.query("SELECT password_hash FROM accounts WHERE id = \(id)")[0].decode(String.self, "password_hash")
            #expect(hash.hasPrefix("$scrypt$ln=17,r=8,p=1$"))
            #expect(!hash.contains(password))
            let dump = try await database.query(
                """
                SELECT coalesce(string_agg(s::text, ' '), '') AS sessions FROM sessions s WHERE account_id = \(id)
                """
            )[0].decode(String.self, "sessions")
            #expect(!dump.contains(account.token))
            #expect(!dump.contains(String(account.token.dropFirst(3))))
            let everything = try await database.query("SELECT a::text AS row FROM accounts a WHERE id = \(id)")[0].decode(String.self, "row")
            #expect(!everything.contains(password))
            #expect(everything.contains(username))
        }
    }

    @Test("deleting the account removes its posts and revokes its tokens")
    func deleteAccount() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let post = try await server.createPost(account)
            let postID = try #require(post["id"] as? String)
            #expect(try await server.json("DELETE", "/v1/accounts/me", token: account.token).status == 204)
            #expect(try await server.json("GET", "/v1/accounts/me", token: account.token).status == 401)
            #expect(try await server.json("GET", "/v1/posts/\(postID)").status == 404)
        }
    }

    @Test("a blocked author's posts disappear from the blocker's lists in every order and from searches, and come back after unblocking")
    func blocks() async throws {
        try await withTestServer { server in
            let reader = try await server.anonymousAccount()
            let author = try await server.anonymousAccount()
            let word = "차단" + UUID().uuidString.prefix(8).lowercased()
            let post = try await server.createPost(author, weatherType: "snow", body: "눈 오는 날 \(word)")
            let postID = try #require(post["id"] as? String)
            let paths = ["new", "hot", "top"].map { "/v1/posts?authorId=\(author.id)&sort=\($0)" } + ["new", "hot"].map { "/v1/posts?q=\(SearchTests.encode(word))&sort=\($0)" }
            func visible() async throws -> [Bool] {
                var shown: [Bool] = []
                for path in paths {
                    let list = try await server.json("GET", path, token: reader.token)
                    #expect(list.status == 200, "\(path): \(list.text)")
                    shown.append(list.items.contains { $0["id"] as? String == postID })
                }
                return shown
            }
            #expect(try await visible() == paths.map { _ in true })
            #expect(try await server.json("POST", "/v1/accounts/me/blocks", token: reader.token, ["accountId": author.id]).status == 204)
            #expect(try await server.json("POST", "/v1/accounts/me/blocks", token: reader.token, ["accountId": author.id]).status == 204)
            #expect(try await visible() == paths.map { _ in false })
            // Others still see it.
            let public_ = try await server.json("GET", "/v1/posts?authorId=\(author.id)")
            #expect(public_.items.contains { $0["id"] as? String == postID })
            #expect(try await server.json("DELETE", "/v1/accounts/me/blocks/\(author.id)", token: reader.token).status == 204)
            #expect(try await visible() == paths.map { _ in true })

            let unknown = try await server.json("POST", "/v1/accounts/me/blocks", token: reader.token, ["accountId": "999999999"])
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "not_found")
            let own = try await server.json("POST", "/v1/accounts/me/blocks", token: reader.token, ["accountId": reader.id])
            #expect(own.status == 422)
            #expect(try await server.json("DELETE", "/v1/accounts/me/blocks/nonsense", token: reader.token).status == 404)
        }
    }

    @Test("a moderator's blocks hold in every list, for a blocked author's visible, hidden and removed posts alike")
    func moderatorBlocks() async throws {
        try await withTestServer { server in
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let author = try await server.anonymousAccount()
            let shown = try #require(try await server.createPost(author, weatherType: "snow")["id"] as? String)
            let held = try #require(try await server.createPost(author, weatherType: "snow")["id"] as? String)
            let decision = try await server.json("POST", "/v1/moderation/posts/\(held)/decision", token: moderator.token, ["action": "remove"])
            #expect(decision.status == 200)
            // Walks newest first until past the older of the two posts: other suites insert posts meanwhile, so the two
            // need not be on the first page.
            let oldest = try #require(Int(shown))
            func listed(_ path: String) async throws -> Set<String> {
                var found: Set<String> = []
                var cursor: String?
                for _ in 0..<100 {
                    let page = try await server.json("GET", path + (cursor.map { "&cursor=\($0)" } ?? ""), token: moderator.token)
                    #expect(page.status == 200)
                    let ids = page.items.compactMap { $0["id"] as? String }
                    found.formUnion(Set(ids).intersection([shown, held]))
                    cursor = page.object["nextCursor"] as? String
                    if cursor == nil || ids.contains(where: { (Int($0) ?? 0) <= oldest }) { break }
                }
                return found
            }
            let paths = ["/v1/posts?authorId=\(author.id)", "/v1/posts?weatherType=snow&limit=100", "/v1/posts?limit=100"]
            for path in paths { #expect(try await listed(path) == [shown, held], "\(path) before the block") }
            #expect(try await server.json("POST", "/v1/accounts/me/blocks", token: moderator.token, ["accountId": author.id]).status == 204)
            for path in paths { #expect(try await listed(path).isEmpty, "\(path) after the block") }
            // A post is still there to moderate: a moderator reads it by id.
            #expect(try await server.json("GET", "/v1/posts/\(held)", token: moderator.token).status == 200)
            #expect(try await server.json("DELETE", "/v1/accounts/me/blocks/\(author.id)", token: moderator.token).status == 204)
            for path in paths { #expect(try await listed(path) == [shown, held], "\(path) after unblocking") }
        }
    }
}
