import Board
import CurlClient
import Database
import Foundation
import RateLimit
import Testing
import WeatherboardServer

/// Issue #13: what an attacker, or an unlucky race, tried against the server. Rate limits are on (the
/// default), as in production; every test runs from its own client address.
@Suite("Hostile clients")
struct HostileClientTests {
    static func uuidKey() -> String { UUID().uuidString }

    /// Sends `count` copies of a request at once and returns their statuses.
    static func burst(_ count: Int, _ send: @escaping @Sendable (Int) async throws -> CurlResponse) async throws -> [CurlResponse] {
        try await withThrowingTaskGroup(of: CurlResponse.self) { group in
            for i in 0..<count { group.addTask { try await send(i) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    // MARK: Finding 1: account takeover by replay

    @Test("an account-creation key replays only while the account is anonymous; after registering it is 409 and hands out no token")
    func replayAfterRegistering() async throws {
        try await withTestServer { server in
            let key = Self.uuidKey()
            let first = try await server.json("POST", "/v1/accounts", headers: [("Idempotency-Key", key)])
            #expect(first.status == 201)
            let token = try #require(first.object["token"] as? String)
            let replay = try await server.json("POST", "/v1/accounts", headers: [("Idempotency-Key", key)])
            #expect(replay.status == 200)

            let registered = try await server.json(
                "POST", "/v1/accounts/me/credentials", token: token, ["username": "takeover_\(UInt32.random(in: 0...UInt32.max))", "password": "a long enough passphrase"]
            )
            #expect(registered.status == 200)
            let attack = try await server.json("POST", "/v1/accounts", headers: [("Idempotency-Key", key)])
            #expect(attack.status == 409)
            #expect(attack.errorCode == "idempotency_conflict")
            #expect(attack.object["token"] == nil)
        }
    }

    @Test("a deleted account's key answers 409, never a token")
    func replayAfterDeleting() async throws {
        try await withTestServer { server in
            let key = Self.uuidKey()
            let first = try await server.json("POST", "/v1/accounts", headers: [("Idempotency-Key", key)])
            let token = try #require(first.object["token"] as? String)
            #expect(try await server.json("DELETE", "/v1/accounts/me", token: token).status == 204)
            let attack = try await server.json("POST", "/v1/accounts", headers: [("Idempotency-Key", key)])
            #expect(attack.status == 409)
            #expect(attack.object["token"] == nil)
        }
    }

    @Test("an account-creation key replays from another address (a phone that changed networks), at the limit, and at once: one account")
    func replayAnywhereAtTheLimitAndAtOnce() async throws {
        try await withTestServer { server in
            let key = Self.uuidKey()
            // 20 parallel first tries with one key: one account, one 201, the rest replays of it.
            let tries = try await Self.burst(20) { _ in try await server.request("POST", "/v1/accounts", headers: [("Idempotency-Key", key)]) }
            #expect(tries.filter { $0.status == 201 }.count == 1)
            #expect(tries.filter { $0.status == 200 }.count == 19)
            let ids = Set(tries.compactMap { ($0.object["account"] as? [String: Any])?["id"] as? String })
            #expect(ids.count == 1)
            let id = try #require(ids.first)
            // Spend the rest of this address's allowance (the replays above took none of it).
            for _ in 0..<29 { #expect(try await server.json("POST", "/v1/accounts").status == 201) }
            #expect(try await server.json("POST", "/v1/accounts").status == 429)
            let atLimit = try await server.json("POST", "/v1/accounts", headers: [("Idempotency-Key", key)])
            #expect(atLimit.status == 200)
            #expect((atLimit.object["account"] as? [String: Any])?["id"] as? String == id)
            let moved = try await server.json("POST", "/v1/accounts", headers: [("Idempotency-Key", key), ("X-Forwarded-For", TestClient.randomAddress())])
            #expect(moved.status == 200)
            #expect((moved.object["account"] as? [String: Any])?["id"] as? String == id)
            let token = try #require(moved.object["token"] as? String)
            #expect(try await server.json("GET", "/v1/accounts/me", token: token).status == 200)
        }
    }

    @Test("account-creation keys must be 16–200 printable ASCII characters and are stored only as a hash", arguments: ["a", "short-key-15chr", String(repeating: "k", count: 201), "tab\there-and-long-enough"])
    func keyShape(key: String) async throws {
        try await withTestServer { server in
            let response = try await server.json("POST", "/v1/accounts", headers: [("Idempotency-Key", key)])
            #expect(response.status == 422)
            #expect(response.errorCode == "invalid_field")
            #expect(response.errorMessage?.hasPrefix("Idempotency-Key") == true)
        }
    }

    @Test("the key as sent is nowhere in the database")
    func keyStoredHashed() async throws {
        try await withTestServer { server in
            let key = "secret-" + Self.uuidKey()
            #expect(try await server.json("POST", "/v1/accounts", headers: [("Idempotency-Key", key)]).status == 201)
            let plain = try await server.dependencies.database.query("SELECT count(*) AS n FROM idempotency_keys WHERE key = \(key)")
            #expect(try plain[0].decode(Int.self, "n") == 0)
        }
    }

    // MARK: Finding 2: banned staff

    @Test("a banned moderator loses every staff power, cannot lift its own ban, and only an admin unbans staff")
    func bannedStaff() async throws {
        try await withTestServer { server in
            let (admin, _, _) = try await server.registeredAccount(prefix: "admin")
            let (moderator, _, _) = try await server.registeredAccount(prefix: "mod")
            let (other, _, _) = try await server.registeredAccount(prefix: "mod2")
            try await server.grantRole("admin", to: admin)
            try await server.grantRole("moderator", to: moderator)
            try await server.grantRole("moderator", to: other)
            let author = try await server.anonymousAccount()
            let post = try await server.createPost(author)
            let postID = try #require(post["id"] as? String)

            // Moderators cannot ban or unban staff, nor themselves.
            #expect(try await server.json("POST", "/v1/moderation/accounts/\(other.id)/ban", token: moderator.token, ["until": NSNull(), "reason": "x"]).status == 403)
            #expect(try await server.json("POST", "/v1/moderation/accounts/\(moderator.id)/ban", token: moderator.token, ["until": NSNull(), "reason": "x"]).status == 403)

            #expect(try await server.json("POST", "/v1/moderation/accounts/\(moderator.id)/ban", token: admin.token, ["until": NSNull(), "reason": "abuse of powers"]).status == 200)
            #expect(try await server.json("POST", "/v1/moderation/accounts/\(other.id)/ban", token: admin.token, ["until": NSNull(), "reason": "abuse of powers"]).status == 200)

            let queue = try await server.json("GET", "/v1/moderation/queue", token: moderator.token)
            #expect(queue.status == 403)
            #expect(queue.errorCode == "account_banned")
            let decision = try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "remove"])
            #expect(decision.errorCode == "account_banned")
            #expect(try await server.json("GET", "/v1/moderation/log", token: moderator.token).errorCode == "account_banned")
            let selfUnban = try await server.json("DELETE", "/v1/moderation/accounts/\(moderator.id)/ban", token: moderator.token)
            #expect(selfUnban.status == 403)
            #expect(try await server.json("DELETE", "/v1/moderation/accounts/\(other.id)/ban", token: moderator.token).status == 403)
            // A banned moderator reads like anyone: the hidden and deleted are not shown to it.
            #expect(try await server.json("DELETE", "/v1/posts/\(postID)", token: moderator.token).status == 403)
            #expect(try await server.json("GET", "/v1/posts/\(postID)", token: author.token).status == 200)

            // Still banned: every refusal changed nothing.
            let state = try await server.dependencies.database.query(
                "SELECT count(*) AS n FROM accounts WHERE id = ANY(\([moderator.id, other.id])::int8[]) AND banned"
            )
            #expect(try state[0].decode(Int.self, "n") == 2)

            // A moderator that is not banned still cannot unban staff; the admin can.
            let (third, _, _) = try await server.registeredAccount(prefix: "mod3")
            try await server.grantRole("moderator", to: third)
            #expect(try await server.json("DELETE", "/v1/moderation/accounts/\(other.id)/ban", token: third.token).status == 403)
            #expect(try await server.json("DELETE", "/v1/moderation/accounts/\(other.id)/ban", token: admin.token).status == 204)
            #expect(try await server.json("GET", "/v1/moderation/queue", token: other.token).status == 200)
        }
    }

    @Test("nobody bans or unbans itself, an admin included; a banned moderator cannot ban or unban a member either")
    func selfBansAndMembers() async throws {
        try await withTestServer { server in
            let (admin, _, _) = try await server.registeredAccount(prefix: "admin")
            let (moderator, _, _) = try await server.registeredAccount(prefix: "mod")
            try await server.grantRole("admin", to: admin)
            try await server.grantRole("moderator", to: moderator)
            let member = try await server.anonymousAccount()

            let selfBan = try await server.json("POST", "/v1/moderation/accounts/\(admin.id)/ban", token: admin.token, ["until": NSNull(), "reason": "x"])
            #expect(selfBan.status == 403)
            #expect(selfBan.errorCode == "forbidden")
            #expect(try await server.json("DELETE", "/v1/moderation/accounts/\(admin.id)/ban", token: admin.token).status == 403)
            // A ban the admin did not make on itself (an operator's, say) it cannot lift either.
            try await server.dependencies.database.execute("UPDATE accounts SET banned = true WHERE id = \(Int(admin.id)!)")
            #expect(try await server.json("DELETE", "/v1/moderation/accounts/\(admin.id)/ban", token: admin.token).status == 403)
            try await server.dependencies.database.execute("UPDATE accounts SET banned = false WHERE id = \(Int(admin.id)!)")

            #expect(try await server.json("POST", "/v1/moderation/accounts/\(moderator.id)/ban", token: admin.token, ["until": NSNull(), "reason": "x"]).status == 200)
            let ban = try await server.json("POST", "/v1/moderation/accounts/\(member.id)/ban", token: moderator.token, ["until": NSNull(), "reason": "x"])
            #expect(ban.errorCode == "account_banned")
            #expect(try await server.json("GET", "/v1/moderation/media/1", token: moderator.token).errorCode == "account_banned")
            #expect(try await server.json("GET", "/v1/moderation/media/1/preview", token: moderator.token).errorCode == "account_banned")
            // Nothing happened to the member.
            #expect(try await server.json("GET", "/v1/accounts/me", token: member.token).object["banned"] as? Bool == false)
        }
    }

    // MARK: Finding 3: limits under concurrency

    @Test("80 parallel account creations from one address: exactly 30 get through, the rest 429 with Retry-After")
    func accountBurst() async throws {
        try await withTestServer { server in
            let responses = try await Self.burst(80) { _ in try await server.json("POST", "/v1/accounts") }
            #expect(responses.filter { $0.status == 201 }.count == 30)
            let refused = responses.filter { $0.status == 429 }
            #expect(refused.count == 50)
            // Every refusal says when the window frees up (about an hour), the ones that waited on the bucket's
            // first, still uncommitted hit included.
            let waits = refused.map { Int($0.header("retry-after") ?? "") ?? 0 }
            #expect(waits.allSatisfy { (3000...3600).contains($0) }, "\(waits.sorted())")
        }
    }

    @Test("a request refused while it waited on a bucket another transaction was creating still gets the real Retry-After, not 1")
    func retryAfterBehindAnUncommittedBucket() async throws {
        try await withTestServer { server in
            let database = server.dependencies.database
            let bucket = "account-create:\(server.clientIP)"
            // Another request's transaction: it made the bucket, full, and has not committed yet.
            let other = try await GatedTransaction.start(
                [
                    """
                    INSERT INTO rate_limits (bucket, hits, expires_at)
                    SELECT \(bucket), array_fill((extract(epoch FROM now()) * 1000000)::int8, ARRAY[30]), now() + interval '1 hour'
                    """,
                ],
                on: database
            )
            let refused = Task { try await server.json("POST", "/v1/accounts") }
            #expect(try await waitForLockWaiter("%INSERT INTO rate_limits AS r%", behind: other))
            try await other.open()
            let response = try await refused.value
            #expect(response.status == 429)
            #expect((3000...3600).contains(Int(response.header("retry-after") ?? "") ?? 0), "Retry-After \(response.header("retry-after") ?? "none")")
        }
    }

    @Test("40 parallel wrong-password logins against one username: exactly 10 are checked, 30 refused")
    func loginBurst() async throws {
        try await withTestServer { server in
            let (_, username, _) = try await server.registeredAccount()
            let responses = try await Self.burst(40) { _ in
                try await server.json("POST", "/v1/sessions", ["username": username, "password": "wrong password \(UUID())"])
            }
            #expect(responses.filter { $0.status == 401 }.count == 10)
            #expect(responses.filter { $0.status == 429 }.count == 30)
        }
    }

    @Test("a login that succeeds gives its attempt back")
    func successfulLoginIsFree() async throws {
        try await withTestServer { server in
            let (_, username, password) = try await server.registeredAccount()
            for _ in 0..<9 {
                #expect(try await server.json("POST", "/v1/sessions", ["username": username, "password": "nope nope nope"]).status == 401)
            }
            for _ in 0..<5 {
                #expect(try await server.json("POST", "/v1/sessions", ["username": username, "password": password]).status == 201)
            }
            #expect(try await server.json("POST", "/v1/sessions", ["username": username, "password": "nope nope nope"]).status == 401)
            #expect(try await server.json("POST", "/v1/sessions", ["username": username, "password": "nope nope nope"]).status == 429)
        }
    }

    @Test("30 parallel posts from one anonymous account: exactly 3 are made")
    func postBurst() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let responses = try await Self.burst(30) { i in
                try await server.json(
                    "POST", "/v1/posts", token: account.token, ["weatherType": "rain", "category": "food", "body": "burst \(i)", "regionId": "1835848"]
                )
            }
            #expect(responses.filter { $0.status == 201 }.count == 3)
            let stored = try await server.dependencies.database.query("SELECT count(*) AS n FROM posts WHERE author_id = \(Int(account.id)!)")
            #expect(try stored[0].decode(Int.self, "n") == 3)
        }
    }

    @Test("the window slides: hits from 59 minutes ago still count, from 61 minutes ago they do not")
    func slidingWindow() async throws {
        try await withTestServer { server in
            for _ in 0..<30 { _ = try await server.anonymousAccount() }
            #expect(try await server.json("POST", "/v1/accounts").status == 429)
            let bucket = "account-create:\(server.clientIP)"
            let database = server.dependencies.database
            // Every hit as if made 59 minutes ago.
            try await database.execute(
                "UPDATE rate_limits SET hits = ARRAY(SELECT (extract(epoch FROM now()) * 1000000)::int8 - 59::int8 * 60 * 1000000 FROM unnest(hits)) WHERE bucket = \(bucket)"
            )
            let stillRefused = try await server.json("POST", "/v1/accounts")
            #expect(stillRefused.status == 429)
            // The oldest hit leaves the window in about a minute.
            #expect((55...61).contains(Int(stillRefused.header("retry-after") ?? "") ?? 0))
            try await database.execute("UPDATE rate_limits SET hits = ARRAY(SELECT h - 2::int8 * 60 * 1000000 FROM unnest(hits) h) WHERE bucket = \(bucket)")
            #expect(try await server.json("POST", "/v1/accounts").status == 201)
        }
    }

    @Test("IPv6 clients are limited per /64")
    func ipv6Prefix() async throws {
        try await withTestServer { server in
            let prefix = String(format: "2001:db8:%x:%x", UInt16.random(in: 1...0xfffe), UInt16.random(in: 1...0xfffe))
            let responses = try await Self.burst(40) { i in
                try await server.request("POST", "/v1/accounts", headers: [("X-Forwarded-For", "\(prefix):\(String(i + 1, radix: 16))::\(i + 7)")])
            }
            #expect(responses.filter { $0.status == 201 }.count == 30)
            let elsewhere = try await server.request("POST", "/v1/accounts", headers: [("X-Forwarded-For", "2001:db8:ffff:ffff::1")])
            #expect(elsewhere.status == 201)
        }
    }

    @Test("an IPv4 client is one client however its address is spelled (dotted, IPv4-mapped, mapped in hex)")
    func ipv4MappedIsIPv4() async throws {
        try await withTestServer { server in
            let octets = (0..<3).map { _ in UInt8.random(in: 1...254) }
            let dotted = "10.\(octets[0]).\(octets[1]).\(octets[2])"
            let hex = String(format: "::ffff:a%02x:%02x%02x", octets[0], octets[1], octets[2])
            let spellings = [dotted, "::ffff:\(dotted)", hex, "::FFFF:\(dotted)"]
            let responses = try await Self.burst(40) { i in
                try await server.request("POST", "/v1/accounts", headers: [("X-Forwarded-For", spellings[i % spellings.count])])
            }
            #expect(responses.filter { $0.status == 201 }.count == 30)
            #expect(responses.filter { $0.status == 429 }.count == 10)
        }
    }

    @Test("an untrusted peer's X-Forwarded-For is ignored: it cannot pick a fresh address to escape its limit")
    func untrustedForwardedForIsIgnored() async throws {
        try await withTestServer(configure: { $0.trustedProxies = [] }) { server in
            // The hit lands in the loopback peer's bucket (shared with other tests that send from loopback
            // untrusted, so its count is not this test's to assert), never in one of the address it claims.
            let spoofed = TestClient.randomAddress()
            let response = try await server.request("POST", "/v1/accounts", headers: [("X-Forwarded-For", spoofed)])
            #expect([201, 429].contains(response.status))
            let database = server.dependencies.database
            #expect(try await database.count("SELECT count(*) AS n FROM rate_limits WHERE bucket = \("account-create:" + spoofed)") == 0)
            #expect(try await database.count("SELECT count(*) AS n FROM rate_limits WHERE bucket = 'account-create:127.0.0.1'") == 1)
        }
    }

    // MARK: Finding 11: replays at the limit, repeated reports, the upgrade's hash

    @Test("12 parallel registrations of one account with fresh usernames: at most 5 reach the password hash, exactly one registers")
    func registrationBurst() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let responses = try await Self.burst(12) { i in
                try await server.json(
                    "POST", "/v1/accounts/me/credentials", token: account.token,
                    ["username": "burst_\(UInt32.random(in: 0...UInt32.max))_\(i)", "password": "a long enough passphrase"]
                )
            }
            let statuses = responses.map(\.status)
            #expect(statuses.filter { $0 == 200 }.count == 1)
            // 200 and 409 (already registered) answers spent a hash; 429 and 401 (the token was replaced) did not.
            #expect(statuses.filter { $0 == 200 || $0 == 409 }.count <= 5, "\(statuses)")
            #expect(statuses.allSatisfy { [200, 409, 429, 401].contains($0) }, "\(statuses)")
        }
    }

    @Test("a taken username is refused before the password is hashed: no registration allowance is spent on it")
    func takenUsernameSpendsNoHash() async throws {
        try await withTestServer { server in
            let (_, taken, _) = try await server.registeredAccount(prefix: "taken")
            let account = try await server.anonymousAccount()
            for _ in 0..<8 {
                let response = try await server.json("POST", "/v1/accounts/me/credentials", token: account.token, ["username": taken, "password": "a long enough passphrase"])
                #expect(response.errorCode == "username_taken")
            }
            let free = try await server.json(
                "POST", "/v1/accounts/me/credentials", token: account.token, ["username": "free_\(UInt32.random(in: 0...UInt32.max))", "password": "a long enough passphrase"]
            )
            #expect(free.status == 200)
        }
    }

    @Test("a replay at the posting limit answers the original post, not 429")
    func replayAtLimit() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let key = Self.uuidKey()
            let first = try await server.createPost(account, body: "첫 글", headers: [("Idempotency-Key", key)])
            _ = try await server.createPost(account, body: "둘째")
            _ = try await server.createPost(account, body: "셋째")
            let payload: [String: Any] = ["weatherType": "rain", "category": "food", "body": "넷째", "regionId": "1835848"]
            #expect(try await server.json("POST", "/v1/posts", token: account.token, payload).status == 429)
            let replay = try await server.json(
                "POST", "/v1/posts", token: account.token, headers: [("Idempotency-Key", key)],
                ["weatherType": "rain", "category": "food", "body": "첫 글", "regionId": "1835848"]
            )
            #expect(replay.status == 201)
            #expect(replay.object["id"] as? String == first["id"] as? String)
        }
    }

    @Test("repeating a report does not spend the report allowance")
    func repeatReportsAreFree() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let reporter = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            let responses = try await Self.burst(25) { _ in
                try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporter.token, ["reason": "spam"])
            }
            #expect(responses.filter { $0.status == 201 }.count == 1)
            #expect(responses.filter { $0.status == 200 }.count == 24)
            #expect(try await server.dependencies.rateLimiter.count(.reporting, subject: reporter.id) == 1)
        }
    }

    // MARK: Finding 6: account deletion keeps the evidence

    @Test("a report committed while the author's deletion waits for it is kept, with its snapshot and its post as evidence")
    func reportRacingDeletionIsKept() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let reporter = try await server.anonymousAccount()
            let postID = try #require((try await server.createPost(author, body: "곧 지워질 글")["id"] as? String).flatMap { Int($0) })
            let database = server.dependencies.database
            // A report as the server makes one (the post locked, the snapshot taken), held open until the deletion waits.
            let report = try await GatedTransaction.start(
                [
                    "SELECT id FROM posts WHERE id = \(postID) AND deleted_at IS NULL FOR UPDATE",
                    """
                    INSERT INTO reports (post_id, reporter_id, reason, reported_title, reported_body, reported_media)
                    SELECT id, \(Int(reporter.id)!), 'spam', title, body, '{}' FROM posts WHERE id = \(postID)
                    """,
                ],
                on: database
            )
            let deletion = Task { try await server.json("DELETE", "/v1/accounts/me", token: author.token).status }
            // The deletion waits on the reported post (at its lock of the author's posts; before that lock existed, at
            // its DELETE of them).
            #expect(try await waitForLockWaiter("%FROM posts%author_id = %", behind: report))
            try await report.open()
            #expect(try await deletion.value == 204)
            let mine = try await server.json("GET", "/v1/accounts/me/reports", token: reporter.token)
            #expect(mine.items.first?["postId"] as? String == String(postID))
            let kept = try await database.query(
                "SELECT p.body, p.deleted_at IS NOT NULL AS deleted, r.reported_body FROM posts p JOIN reports r ON r.post_id = p.id WHERE p.id = \(postID)"
            )
            #expect(kept.count == 1)
            #expect(try kept.first?.decode(Bool.self, "deleted") == true)
            #expect(try kept.first?.decode(String.self, "body") == "")
            #expect(try kept.first?.decode(String.self, "reported_body") == "곧 지워질 글")
        }
    }

    @Test("a deleted reporter's report stays as evidence but no longer counts toward hiding the post")
    func deletedReportersDoNotHide() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author)["id"] as? String)
            var reporters: [TestAccount] = []
            for _ in 0..<3 { reporters.append(try await server.registeredAccount(prefix: "rep").0) }
            for reporter in reporters.prefix(2) {
                #expect(try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporter.token, ["reason": "spam"]).status == 201)
            }
            #expect(try await server.json("DELETE", "/v1/accounts/me", token: reporters[0].token).status == 204)
            #expect(try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporters[2].token, ["reason": "spam"]).status == 201)
            // Two live trusted reporters of a threshold of three: still visible.
            #expect(try await server.json("GET", "/v1/posts/\(postID)").status == 200)
            #expect(try await server.dependencies.database.count("SELECT count(*) AS n FROM reports WHERE post_id = \(Int(postID)!)") == 3)
        }
    }

    @Test("a post sent while its author's deletion commits is refused (401), never a live post by a deleted account")
    func postRacingDeletionIsRefused() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let authorID = try #require(Int(author.id))
            let database = server.dependencies.database
            let deletion = try await GatedTransaction.accountDeletion(authorID, on: database)
            // Checked by a statement of its own before the deletion commits (the post's weather is looked up outside its
            // transaction); the transaction's own check of the session then waits on the deletion's locks.
            let post = Task {
                try await server.json(
                    "POST", "/v1/posts", token: author.token, ["weatherType": "rain", "category": "food", "body": "유령 글", "regionId": "1835848"]
                )
            }
            #expect(try await waitForLockWaiter("%FOR SHARE OF s, a%", behind: deletion))
            try await deletion.open()
            let response = try await post.value
            #expect(response.status == 401)
            #expect(try await database.count("SELECT count(*) AS n FROM posts WHERE author_id = \(authorID)") == 0)
        }
    }

    @Test("deleting a reported author keeps the reports, their snapshots and the queue item; the text is erased")
    func deletionKeepsEvidence() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let reporter = try await server.anonymousAccount()
            let (moderator, _, _) = try await server.registeredAccount(prefix: "mod")
            try await server.grantRole("moderator", to: moderator)
            let reported = try #require(try await server.createPost(author, title: "광고", body: "싸게 팝니다 010-0000-0000")["id"] as? String)
            let quiet = try #require(try await server.createPost(author, body: "아무도 신고하지 않은 글")["id"] as? String)
            #expect(try await server.json("POST", "/v1/posts/\(reported)/reports", token: reporter.token, ["reason": "spam"]).status == 201)

            #expect(try await server.json("DELETE", "/v1/accounts/me", token: author.token).status == 204)
            #expect(try await server.json("GET", "/v1/accounts/me", token: author.token).status == 401)
            #expect(try await server.json("GET", "/v1/posts/\(reported)").status == 404)
            #expect(try await server.json("GET", "/v1/posts/\(quiet)", token: moderator.token).status == 404)

            let mine = try await server.json("GET", "/v1/accounts/me/reports", token: reporter.token)
            let report = try #require(mine.items.first)
            #expect(report["postId"] as? String == reported)
            #expect(report["outcome"] as? String == "open")

            let queue = try await server.json("GET", "/v1/moderation/queue?limit=100", token: moderator.token)
            var item = queue.items.first { ($0["post"] as? [String: Any])?["id"] as? String == reported }
            var cursor = queue.object["nextCursor"] as? String
            while item == nil, let next = cursor {
                let page = try await server.json("GET", "/v1/moderation/queue?limit=100&cursor=\(next)", token: moderator.token)
                item = page.items.first { ($0["post"] as? [String: Any])?["id"] as? String == reported }
                cursor = page.object["nextCursor"] as? String
            }
            let found = try #require(item)
            let post = try #require(found["post"] as? [String: Any])
            #expect(post["status"] as? String == "deleted")
            #expect(post["body"] as? String == "")
            #expect((found["reports"] as? [[String: Any]])?.first?["reportedBody"] as? String == "싸게 팝니다 010-0000-0000")

            let rows = try await server.dependencies.database.query(
                "SELECT count(*) FILTER (WHERE body <> '' OR title IS NOT NULL) AS with_text, count(*) AS n FROM posts WHERE author_id = \(Int(author.id)!)"
            )
            #expect(try rows[0].decode(Int.self, "n") == 1)
            #expect(try rows[0].decode(Int.self, "with_text") == 0)
            let account = try await server.dependencies.database.query(
                "SELECT username IS NULL AND password_hash IS NULL AND deleted_at IS NOT NULL AS erased FROM accounts WHERE id = \(Int(author.id)!)"
            )
            #expect(try account[0].decode(Bool.self, "erased"))

            // Resolving it leaves the reporter its outcome.
            #expect(try await server.json("POST", "/v1/moderation/posts/\(reported)/decision", token: moderator.token, ["action": "remove"]).status == 200)
            let after = try await server.json("GET", "/v1/accounts/me/reports", token: reporter.token)
            #expect(after.items.first?["outcome"] as? String == "actioned")
        }
    }

    // MARK: Purger (CONTRACT §7)

    @Test("one purger pass removes what expired and nothing else; a second instance waits its turn")
    func purger() async throws {
        try await withTestServer(configure: { $0.reportEvidenceDays = 30 }) { server in
            let database = server.dependencies.database
            let tag = "purge-\(UUID().uuidString)"
            // Expired and live idempotency keys, buckets, sessions.
            try await database.execute(
                """
                INSERT INTO idempotency_keys (scope, key, request_hash, created_at)
                VALUES (\(tag), 'old', '', now() - interval '25 hours'), (\(tag), 'new', '', now() - interval '23 hours')
                """
            )
            try await database.execute(
                """
                INSERT INTO rate_limits (bucket, hits, expires_at)
                VALUES (\(tag + ":old"), '{1}', now() - interval '1 second'), (\(tag + ":new"), '{1}', now() + interval '1 hour')
                """
            )
            let account = try await server.anonymousAccount()
            let accountID = Int(account.id)!
            #expect(try await server.json("DELETE", "/v1/sessions/current", token: account.token).status == 204)
            try await database.execute("UPDATE sessions SET revoked_at = now() - interval '25 hours' WHERE account_id = \(accountID)")

            // A report resolved 31 days ago loses its snapshot; one resolved yesterday keeps it.
            let author = try await server.anonymousAccount()
            let old = try #require(try await server.createPost(author, body: "오래된 증거")["id"] as? String)
            let recent = try #require(try await server.createPost(author, body: "최근 증거")["id"] as? String)
            let reporter = try await server.anonymousAccount()
            for id in [old, recent] {
                #expect(try await server.json("POST", "/v1/posts/\(id)/reports", token: reporter.token, ["reason": "spam"]).status == 201)
            }
            try await database.execute(
                "UPDATE reports SET status = 'dismissed', resolved_at = now() - interval '31 days' WHERE post_id = \(Int(old)!)"
            )
            try await database.execute("UPDATE reports SET status = 'dismissed', resolved_at = now() - interval '1 day' WHERE post_id = \(Int(recent)!)")

            // The server's purger without its media part: the media suite's one purge is the only pass over media.
            let purger = Purger(database: database, policy: server.dependencies.purger.policy)
            // While another instance holds the lock, a pass does nothing.
            let other = PostgresPool(configuration: PostgresConfiguration(conninfo: TestDatabase.url, poolSize: 1))
            defer { other.shutdown() }
            try await other.withConnection { _ = try $0.query("SELECT pg_advisory_lock(\(Int64(0x7762_7075_7267_6572)))") }
            #expect(try await purger.runOnce().ran == false)
            try await other.withConnection { _ = try $0.query("SELECT pg_advisory_unlock(\(Int64(0x7762_7075_7267_6572)))") }

            let pass = try await purger.runOnce()
            #expect(pass.ran)
            #expect((pass.counts["idempotency_keys"] ?? 0) >= 1)
            #expect((pass.counts["report_evidence"] ?? 0) >= 1)
            let keys = try await database.query("SELECT key FROM idempotency_keys WHERE scope = \(tag)").map { try $0.decode(String.self, "key") }
            #expect(keys == ["new"])
            let buckets = try await database.query("SELECT bucket FROM rate_limits WHERE bucket LIKE \(tag + ":%")").map { try $0.decode(String.self, "bucket") }
            #expect(buckets == [tag + ":new"])
            let sessions = try await database.query("SELECT count(*) AS n FROM sessions WHERE account_id = \(accountID) AND revoked_at IS NOT NULL")
            #expect(try sessions[0].decode(Int.self, "n") == 0)
            let snapshots = try await database.query(
                "SELECT post_id, reported_body FROM reports WHERE post_id = ANY(\([old, recent])::int8[]) ORDER BY post_id"
            ).map { try $0.decode(String.self, "reported_body") }
            #expect(snapshots == ["", "최근 증거"])
            // The reporter still sees both reports and their outcome.
            let reports = try await server.json("GET", "/v1/accounts/me/reports", token: reporter.token)
            #expect(reports.items.map { $0["outcome"] as? String } == ["dismissed", "dismissed"])
        }
    }

    @Test("every statement of an account deletion reaches its rows through an index")
    func deletionPlans() async throws {
        try await withTestServer { server in
            let plans = try await server.dependencies.database.transaction { connection in
                try connection.simpleQuery("SET LOCAL enable_seqscan = off")
                return try PostgresAccountStore.deletionStatements(accountID: 1).map { statement in
                    var explain: SQLQuery = "EXPLAIN "
                    explain.append(statement)
                    return try connection.query(explain).map { try $0.decode(String.self, "QUERY PLAN") }.joined(separator: "\n")
                }
            }
            #expect(plans.count >= 6)
            for plan in plans {
                #expect(!plan.contains("Seq Scan"), "a deletion statement scans a whole table:\n\(plan)")
            }
        }
    }
}
