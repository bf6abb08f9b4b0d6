import Database
import Foundation
import Testing
import WeatherboardServer

// Issue #33, CONTRACT §3 and §12: "a revoked token, a ban, a deletion … takes effect at once", whatever instance and
// standby serve the request. Two server instances on the primary and a standby that applies every commit a second
// late: a change made through instance A is refused on the very next request through instance B, while the standby
// still shows the old state (the tests read it there to show the lag was real), and refusing runs no read.
//
// These are tests of `ReplicationTests`, declared in an extension so they run inside its one serialized suite: they
// share its standby and delay it, and a serialized suite of their own would run beside it (suites run in parallel).
extension ReplicationTests {
    @Test("with the standby a second behind, a token logged out on one instance is 401 unauthenticated on the very next request on the other, read (a post, the list, a post's replies, the inbox) or write (a reply, a helpful mark); refusing it runs no read and writes nothing")
    func logoutAtOnceOnTheOtherInstance() async throws {
        try await LaggingStandby.run { a, b, standby in
            let author = try await a.anonymousAccount()
            let post = try #require(try await a.createPost(author, body: "로그아웃 뒤의 글")["id"] as? String)
            // One member per request: each request is the very next one after its own logout.
            let routes: [(method: String, path: String, body: [String: Any]?)] = [
                ("GET", "/v1/posts/\(post)", nil),
                ("GET", "/v1/posts?limit=5", nil),
                ("GET", "/v1/posts/\(post)/replies", nil),
                ("GET", "/v1/accounts/me/inbox", nil),
                ("POST", "/v1/posts/\(post)/replies", ["body": "로그아웃한 토큰의 댓글"]),
                ("PUT", "/v1/posts/\(post)/helpful", nil),
            ]
            var members: [TestAccount] = []
            for _ in routes { members.append(try await a.anonymousAccount()) }
            // Each token works on B before its logout: the 401 below is the logout's doing.
            for member in members { #expect(try await b.json("GET", "/v1/accounts/me", token: member.token).status == 200) }
            try await standby.lagBehind(a, b)

            var stale = 0
            for (member, route) in zip(members, routes) {
                let whileStale = try await expectRefusal(
                    on: b, route.method, route.path, token: member.token, body: route.body,
                    after: {
                        let logout = try await a.json("DELETE", "/v1/sessions/current", token: member.token)
                        #expect(logout.status == 204, "\(logout.text)")
                    },
                    standbyShowedOldState: {
                        try await standby.count("SELECT count(*) AS n FROM sessions WHERE account_id = \(Int(member.id)!) AND revoked_at IS NULL") == 1
                    }
                )
                if whileStale { stale += 1 }
            }
            #expect(stale > 0, "the standby had applied every logout before its refusal: the lag was not exercised")
            let database = a.dependencies.database
            #expect(try await database.count("SELECT count(*) AS n FROM replies WHERE post_id = \(Int(post)!)") == 0, "a refused reply was stored")
            #expect(try await database.count("SELECT count(*) AS n FROM helpful_marks WHERE post_id = \(Int(post)!)") == 0, "a refused mark was stored")
        }
    }

    @Test("with the standby a second behind, an account banned through one instance is 403 account_banned on its very next write on the other (a post, a reply, a helpful mark), which stores nothing and runs no read; it still reads there (its account shows the ban, a post, the list, replies, its inbox)")
    func banAtOnceOnTheOtherInstance() async throws {
        try await LaggingStandby.run { a, b, standby in
            let moderator = try await a.anonymousAccount()
            try await a.grantRole("moderator", to: moderator)
            let author = try await a.anonymousAccount()
            let post = try #require(try await a.createPost(author, body: "차단된 사람도 읽는 글")["id"] as? String)
            let writes: [(method: String, path: String, body: [String: Any]?)] = [
                ("POST", "/v1/posts", ["weatherType": "rain", "category": "food", "body": "차단된 글", "regionId": "1835848"]),
                ("POST", "/v1/posts/\(post)/replies", ["body": "차단된 댓글"]),
                ("PUT", "/v1/posts/\(post)/helpful", nil),
            ]
            var targets: [(account: TestAccount, post: String)] = []
            for _ in writes {
                let target = try await a.anonymousAccount()
                targets.append((target, try #require(try await a.createPost(target, body: "곧 차단될 사람의 글")["id"] as? String)))
            }
            // Something in each target's inbox, for its reads after the ban.
            for target in targets {
                #expect(try await a.json("POST", "/v1/posts/\(target.post)/replies", token: author.token, ["body": "답장"]).status == 201)
            }
            try await standby.lagBehind(a, b)

            var stale = 0
            for (target, write) in zip(targets, writes) {
                let whileStale = try await expectRefusal(
                    on: b, write.method, write.path, token: target.account.token, body: write.body, status: 403, code: "account_banned",
                    after: {
                        let ban = try await a.json("POST", "/v1/moderation/accounts/\(target.account.id)/ban", token: moderator.token, ["until": NSNull(), "reason": "spam"])
                        #expect(ban.status == 200, "\(ban.text)")
                    },
                    standbyShowedOldState: {
                        try await standby.count("SELECT count(*) AS n FROM accounts WHERE id = \(Int(target.account.id)!) AND NOT banned") == 1
                    }
                )
                if whileStale { stale += 1 }
            }
            #expect(stale > 0, "the standby had applied every ban before its refusal: the lag was not exercised")

            // A banned account may read (CONTRACT §5), on B too, and nothing of its refused writes was stored.
            for target in targets {
                let before = try await b.authCounters()
                let me = try await b.json("GET", "/v1/accounts/me", token: target.account.token)
                #expect(me.status == 200 && me.object["banned"] as? Bool == true, "GET /v1/accounts/me of a banned account on B: \(me.status) \(me.text)")
                let shown = try await b.json("GET", "/v1/posts/\(post)", token: target.account.token)
                #expect(shown.status == 200 && shown.object["id"] as? String == post, "GET a post: \(shown.status) \(shown.text)")
                let list = try await b.json("GET", "/v1/posts?limit=5", token: target.account.token)
                #expect(list.status == 200, "GET the list: \(list.status) \(list.text)")
                #expect(try await b.json("GET", "/v1/posts/\(post)/replies", token: target.account.token).status == 200)
                let inbox = try await b.json("GET", "/v1/accounts/me/inbox", token: target.account.token)
                #expect(inbox.status == 200 && inbox.items.count == 1, "the inbox of a banned account: \(inbox.status) \(inbox.text)")
                let after = try await b.authCounters()
                #expect(after.refused == before.refused, "a banned account's reads counted as refused: \(before) → \(after)")
                let id = Int(target.account.id)!
                let database = a.dependencies.database
                #expect(try await database.count("SELECT count(*) AS n FROM posts WHERE author_id = \(id)") == 1, "a banned account's post was stored")
                #expect(try await database.count("SELECT count(*) AS n FROM replies WHERE author_id = \(id)") == 0, "a banned account's reply was stored")
                #expect(try await database.count("SELECT count(*) AS n FROM helpful_marks WHERE account_id = \(id)") == 0, "a banned account's mark was stored")
            }
        }
    }

    @Test("with the standby a second behind, an account deleted through one instance is 401 unauthenticated on its very next request on the other, read (its post, the list, its account, its inbox) or write (a post, a reply); refusing runs no read and writes nothing, and its post is gone there for others")
    func deletionAtOnceOnTheOtherInstance() async throws {
        try await LaggingStandby.run { a, b, standby in
            let author = try await a.anonymousAccount()
            let post = try #require(try await a.createPost(author, body: "남아 있는 글")["id"] as? String)
            var doomed: [(account: TestAccount, post: String)] = []
            for _ in 0..<6 {
                let account = try await a.anonymousAccount()
                doomed.append((account, try #require(try await a.createPost(account, body: "곧 지워질 계정의 글")["id"] as? String)))
            }
            let routes: [(method: String, path: String, body: [String: Any]?)] = [
                ("GET", "/v1/posts/\(doomed[0].post)", nil),
                ("GET", "/v1/posts?limit=5", nil),
                ("GET", "/v1/accounts/me", nil),
                ("GET", "/v1/accounts/me/inbox", nil),
                ("POST", "/v1/posts", ["weatherType": "rain", "category": "food", "body": "지운 계정의 글", "regionId": "1835848"]),
                ("POST", "/v1/posts/\(post)/replies", ["body": "지운 계정의 댓글"]),
            ]
            for account in doomed { #expect(try await b.json("GET", "/v1/accounts/me", token: account.account.token).status == 200) }
            try await standby.lagBehind(a, b)

            var stale = 0
            for (account, route) in zip(doomed.map(\.account), routes) {
                let whileStale = try await expectRefusal(
                    on: b, route.method, route.path, token: account.token, body: route.body,
                    after: {
                        let deletion = try await a.json("DELETE", "/v1/accounts/me", token: account.token)
                        #expect(deletion.status == 204, "\(deletion.text)")
                    },
                    standbyShowedOldState: {
                        try await standby.count("SELECT count(*) AS n FROM accounts WHERE id = \(Int(account.id)!) AND deleted_at IS NULL") == 1
                    }
                )
                if whileStale { stale += 1 }
            }
            #expect(stale > 0, "the standby had applied every deletion before its refusal: the lag was not exercised")
            // Its posts went with it, on B as well (CONTRACT §3: "from every view at once").
            let gone = try await b.json("GET", "/v1/posts/\(doomed[0].post)", token: author.token)
            #expect(gone.status == 404, "a deleted account's post read on B: \(gone.status) \(gone.text)")
            let database = a.dependencies.database
            let ids = doomed.map { $0.account.id }.joined(separator: ",")
            #expect(try await database.count("SELECT count(*) AS n FROM posts WHERE author_id IN (\(raw: ids)) AND deleted_at IS NULL") == 0)
            #expect(try await database.count("SELECT count(*) AS n FROM replies WHERE post_id = \(Int(post)!)") == 0, "a refused reply was stored")
        }
    }

    @Test("with the standby a second behind, an account upgraded through one instance has its old token refused 401 unauthenticated on the very next request on the other (its post, its posts, a post, a helpful mark), running no read; its new token works there at once, with the same id and its posts still its own")
    func upgradeAtOnceOnTheOtherInstance() async throws {
        try await LaggingStandby.run { a, b, standby in
            let author = try await a.anonymousAccount()
            let post = try #require(try await a.createPost(author, body: "업그레이드 뒤에 표시할 글")["id"] as? String)
            var upgrading: [(account: TestAccount, post: String)] = []
            for _ in 0..<4 {
                let account = try await a.anonymousAccount()
                upgrading.append((account, try #require(try await a.createPost(account, body: "익명일 때 쓴 글")["id"] as? String)))
            }
            let routes: [(method: String, path: String, body: [String: Any]?)] = [
                ("GET", "/v1/posts/\(upgrading[0].post)", nil),
                ("GET", "/v1/accounts/me/posts", nil),
                ("POST", "/v1/posts", ["weatherType": "rain", "category": "food", "body": "옛 토큰의 글", "regionId": "1835848"]),
                ("PUT", "/v1/posts/\(post)/helpful", nil),
            ]
            for account in upgrading { #expect(try await b.json("GET", "/v1/accounts/me", token: account.account.token).status == 200) }
            try await standby.lagBehind(a, b)

            var stale = 0
            var newTokens: [String] = []
            for (account, route) in zip(upgrading.map(\.account), routes) {
                let whileStale = try await expectRefusal(
                    on: b, route.method, route.path, token: account.token, body: route.body,
                    after: {
                        let username = "revoked_\(UInt32.random(in: 0...UInt32.max))"
                        let upgraded = try await a.json(
                            "POST", "/v1/accounts/me/credentials", token: account.token, ["username": username, "password": "correct horse battery staple"]
                        )
                        #expect(upgraded.status == 200, "\(upgraded.text)")
                        newTokens.append(try #require(upgraded.object["token"] as? String))
                    },
                    standbyShowedOldState: {
                        try await standby.count("SELECT count(*) AS n FROM accounts WHERE id = \(Int(account.id)!) AND kind = 'anonymous'") == 1
                    }
                )
                if whileStale { stale += 1 }
            }
            #expect(stale > 0, "the standby had applied every upgrade before its refusal: the lag was not exercised")

            // The new token works on B, for the same account and its posts.
            for ((account, ownPost), token) in zip(upgrading, newTokens) {
                let before = try await b.authCounters()
                let me = try await b.json("GET", "/v1/accounts/me", token: token)
                #expect(me.status == 200, "the new token on B: \(me.status) \(me.text)")
                #expect(me.object["id"] as? String == account.id && me.object["kind"] as? String == "registered", "\(me.text)")
                let mine = try await b.json("GET", "/v1/accounts/me/posts", token: token)
                #expect(mine.items.map { $0["id"] as? String } == [ownPost], "the upgraded account's posts on B: \(mine.text)")
                let shown = try await b.json("GET", "/v1/posts/\(ownPost)", token: token)
                #expect(shown.status == 200 && shown.object["isMine"] as? Bool == true, "its post on B with the new token: \(shown.text)")
                #expect((shown.object["author"] as? [String: Any])?["id"] as? String == account.id)
                let after = try await b.authCounters()
                #expect(after.refused == before.refused, "the new token's requests counted as refused: \(before) → \(after)")
                let id = Int(account.id)!
                #expect(try await a.dependencies.database.count("SELECT count(*) AS n FROM posts WHERE author_id = \(id)") == 1, "the old token's post was stored")
            }
            #expect(try await a.dependencies.database.count("SELECT count(*) AS n FROM helpful_marks WHERE post_id = \(Int(post)!)") == 0, "the old token's mark was stored")
        }
    }
}

/// Sends one request with `token` to `server` right after `change` (made through the other instance), and expects it
/// refused with `status` and `code`, with nothing read for it: `db_reads_total` unmoved on every target, one session
/// check (by a statement of its own, not inside a read) and, for a refused token (401), one refusal counted in
/// `auth_refused_total`. Returns whether the standby still showed the old state just after the refusal.
func expectRefusal(
    on server: TestServer, _ method: String, _ path: String, token: String, body: [String: Any]?,
    status: Int = 401, code: String = "unauthenticated",
    after change: () async throws -> Void, standbyShowedOldState: () async throws -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws -> Bool {
    let before = try await server.authCounters()
    try await change()
    let response = try await server.json(method, path, token: token, body)
    let stale = try await standbyShowedOldState()
    let after = try await server.authCounters()
    let request = "\(method) \(path)"
    #expect(response.status == status, "\(request): \(response.status) \(response.text)", sourceLocation: sourceLocation)
    #expect(response.errorCode == code, "\(request): \(response.text)", sourceLocation: sourceLocation)
    #expect(after.reads == before.reads, "\(request): a read ran for a refused request (db_reads_total \(before.reads) → \(after.reads))", sourceLocation: sourceLocation)
    #expect(after.sessionChecks - before.sessionChecks == 1, "\(request): auth_session_checks_total \(before.sessionChecks) → \(after.sessionChecks)", sourceLocation: sourceLocation)
    #expect(after.checksInRead == before.checksInRead, "\(request): the refused session was checked inside a read", sourceLocation: sourceLocation)
    if status == 401 {
        #expect(after.refused - before.refused == 1, "\(request): auth_refused_total \(before.refused) → \(after.refused)", sourceLocation: sourceLocation)
    }
    return stale
}

/// Two instances on the pair of `ReplicaCluster`, and a session of the test's own on the standby: what it has
/// replayed so far.
struct LaggingStandby: Sendable {
    let pool: PostgresPool

    /// Runs `body` with both instances (reads may go to a standby up to 5 s behind) and the standby's session; the
    /// standby applies commits at once until `lagBehind`, and again afterwards.
    ///
    /// The URLs are asked of `deploy/local-replica.sh` now, not taken from `ReplicaCluster.ready`
    /// (`withTwoServers`): that read URL is the standby as it was when the run began, and after the suite's failover
    /// test (a promotion, then `rebuild`) it names the new primary, so instances built on it would read no standby.
    static func run(_ body: @Sendable (TestServer, TestServer, LaggingStandby) async throws -> Void) async throws {
        _ = try await ReplicaCluster.ready.value
        try await ReplicaCluster.run("delay", "0")
        let write = try await ReplicaCluster.run("url", ReplicaCluster.database)
        let read = try await ReplicaCluster.run("read-url", ReplicaCluster.database)
        let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: read, poolSize: 1))
        defer { pool.shutdown() }
        let standby = LaggingStandby(pool: pool)
        #expect(try await standby.count("SELECT pg_is_in_recovery()::int AS n") == 1, "\(read) is not a standby")
        // As `withTwoServers`: one media directory for both instances, as one bucket would be.
        let media = MediaFixtures.directory + "/replica-\(UUID().uuidString)"
        let configure: @Sendable (inout AppConfiguration) -> Void = { configuration in
            configuration.mediaStorage = .local(directory: media)
            configuration.databaseURL = write
            configuration.databaseReadURL = read
            configuration.maxReplicaLagMilliseconds = 5000
            configuration.rateLimitsEnabled = false
        }
        do {
            try await withTestServer(configure: configure) { a in
                try await withTestServer(configure: configure) { b in try await body(a, b, standby) }
            }
        } catch {
            _ = try? await ReplicaCluster.run("delay", "0")
            throw error
        }
        try await ReplicaCluster.run("delay", "0")
    }

    /// Once everything written so far is on the standby and B reads there, the standby applies every later commit a
    /// second late.
    func lagBehind(_ a: TestServer, _ b: TestServer) async throws {
        let writer = try await a.anonymousAccount()
        let last = try #require(try await a.createPost(writer, body: "여기까지는 대기 서버에 있다")["id"] as? String)
        try await b.waitForStandbyRead(post: last)
        #expect(try await count("SELECT count(*) AS n FROM posts WHERE id = \(Int(last)!)") == 1)
        try await ReplicaCluster.run("delay", "1000")
    }

    /// The `n` of a `SELECT count(*) AS n …` on the standby.
    func count(_ query: SQLQuery) async throws -> Int {
        try await pool.count(query)
    }
}

/// What `/metrics` of one instance says, at one moment, about token checks and the reads that could go to a standby.
struct AuthCounters: Sendable, CustomStringConvertible {
    /// `db_reads_total`, every target.
    var reads: Double
    /// `auth_session_checks_total`, both ways (`how="statement"` and `how="in_read"`).
    var sessionChecks: Double
    /// `auth_session_checks_total{how="in_read"}`.
    var checksInRead: Double
    /// `auth_refused_total`.
    var refused: Double

    var description: String { "reads \(reads), session checks \(sessionChecks) (in a read \(checksInRead)), refused \(refused)" }
}

extension TestServer {
    /// The sum of every series of `name` in `/metrics` whose labels include `labels` (`how="statement"`, or several
    /// separated by commas); 0 when there is none.
    func metric(_ name: String, labels: String? = nil) async throws -> Double {
        Self.metric(name, labels: labels, in: try await metricsText())
    }

    func authCounters() async throws -> AuthCounters {
        let text = try await metricsText()
        return AuthCounters(
            reads: Self.metric("db_reads_total", labels: nil, in: text),
            sessionChecks: Self.metric("auth_session_checks_total", labels: nil, in: text),
            checksInRead: Self.metric("auth_session_checks_total", labels: "how=\"in_read\"", in: text),
            refused: Self.metric("auth_refused_total", labels: nil, in: text)
        )
    }

    /// `/metrics`, fetched without a token (it is not one of the requests under test).
    func metricsText() async throws -> String {
        let response = try await request("GET", "/metrics")
        guard response.status == 200 else { throw TestFailure("/metrics answered \(response.status)") }
        return String(decoding: response.body, as: UTF8.self)
    }

    /// Parses the Prometheus text format as `readsByTarget` does: `name{label="value",…} number` or `name number`.
    static func metric(_ name: String, labels: String?, in text: String) -> Double {
        let wanted = Set((labels ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        var sum = 0.0
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let series = line.prefix { $0 != "{" && $0 != " " }
            guard series == name, let value = Double(line.split(separator: " ").last ?? "") else { continue }
            var present: Set<String> = []
            if line.dropFirst(series.count).first == "{", let close = line.lastIndex(of: "}") {
                let body = line[line.index(line.startIndex, offsetBy: series.count + 1)..<close]
                present = Set(body.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            }
            if wanted.isSubset(of: present) { sum += value }
        }
        return sum
    }
}
