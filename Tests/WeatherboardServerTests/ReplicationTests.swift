import Database
import Foundation
import Subprocess
import Synchronization
import SystemPackage
import Testing
import Weather
import WeatherboardServer

/// The primary and hot standby of `deploy/local-replica.sh` (CONTRACT §12), driven through the script as an operator
/// would. `deploy/dev test` starts the pair and sets `WEATHERBOARD_REPLICA_TESTS=1`; without it these tests are off.
enum ReplicaCluster {
    static let enabled = ProcessInfo.processInfo.environment["WEATHERBOARD_REPLICA_TESTS"] == "1"
    static let database = "weatherboard_replica_test"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("deploy/local-replica.sh").path

    /// Runs `deploy/local-replica.sh arguments…` and returns its standard output (trimmed); fails the test on a non-zero exit.
    @discardableResult
    static func run(_ arguments: String...) async throws -> String {
        let outcome = try await Subprocess.run(
            .path(FilePath("/bin/bash")), arguments: Arguments([script] + arguments), output: .string(limit: 1 << 20), error: .string(limit: 1 << 20)
        )
        guard outcome.terminationStatus.isSuccess else {
            throw TestFailure("local-replica.sh \(arguments.joined(separator: " ")) failed: \(outcome.standardError)")
        }
        return outcome.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts the pair, makes a fresh database, migrates it through the primary; once per test process.
    static let ready: Task<(write: String, read: String), any Error> = Task {
        try await run("start")
        try await run("delay", "0")
        try await run("dropdb", database)
        try await run("createdb", database)
        let write = try await run("url", database)
        let read = try await run("read-url", database)
        let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: write, poolSize: 1, statementTimeoutMilliseconds: 0))
        defer { pool.shutdown() }
        _ = try await Migrator(directory: TestDatabase.sqlDirectory).run(on: pool, logger: testLogger)
        _ = try await RegionCatalog.load(file: RegionCatalog.file(inMigrationsDirectory: TestDatabase.sqlDirectory), on: pool, logger: testLogger)
        return (write, read)
    }

    /// Runs `body`, then sets the standby's delay back to 0, awaited: a reset left to a task of its own could land
    /// after the next test has set its own delay (that test then runs on a standby with no lag).
    static func resettingDelay<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            let value = try await body()
            try await run("delay", "0")
            return value
        } catch {
            _ = try? await run("delay", "0")
            throw error
        }
    }

    /// Two server instances on the pair: writes to the primary (multi-host URL), reads from the standby.
    static func withTwoServers<T: Sendable>(
        maxLagMilliseconds: Int = 500, _ body: @Sendable (TestServer, TestServer) async throws -> T
    ) async throws -> T {
        _ = try await ready.value
        // The URLs as the pair is now: after the failover test (a promotion, then `rebuild`) the run's first read URL
        // names the new primary, and instances built on it would read no standby at all.
        let write = try await run("url", database)
        let read = try await run("read-url", database)
        // One media directory for both instances, as one bucket would be.
        let media = MediaFixtures.directory + "/replica-\(UUID().uuidString)"
        let configure: @Sendable (inout AppConfiguration) -> Void = { configuration in
            configuration.mediaStorage = .local(directory: media)
            configuration.databaseURL = write
            configuration.databaseReadURL = read
            configuration.maxReplicaLagMilliseconds = maxLagMilliseconds
            configuration.rateLimitsEnabled = false
        }
        return try await withTestServer(configure: configure) { a in
            try await withTestServer(configure: configure) { b in try await body(a, b) }
        }
    }
}

extension TestServer {
    /// `db_reads_total` by target, from `/metrics`.
    func readsByTarget() async throws -> [String: Double] {
        let text = String(decoding: try await request("GET", "/metrics").body, as: UTF8.self)
        var reads: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("db_reads_total{") {
            guard let open = line.firstIndex(of: "\""), let close = line[line.index(after: open)...].firstIndex(of: "\""),
                let value = Double(line.split(separator: " ").last ?? "")
            else { continue }
            reads[String(line[line.index(after: open)..<close])] = value
        }
        return reads
    }

    func standbyReads() async throws -> Double {
        try await readsByTarget().filter { $0.key != "primary" }.values.reduce(0, +)
    }

    /// Waits (bounded) until this server's monitor has sampled the standby as fresh: an anonymous read goes there.
    func waitForStandbyReads(_ timeout: Duration = .seconds(30)) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        let before = try await standbyReads()
        while clock.now < deadline {
            _ = try await request("GET", "/v1/posts?limit=1")
            if try await standbyReads() > before { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestFailure("no read went to the standby within \(timeout)")
    }
}

extension TestServer {
    /// One anonymous read of a post: its status, and the target that served it (the one `db_reads_total` moved by one;
    /// nil when none or several moved).
    func anonymousRead(post id: String) async throws -> (status: Int, target: String?) {
        let before = try await readsByTarget()
        let status = try await request("GET", "/v1/posts/\(id)").status
        let after = try await readsByTarget()
        let moved = after.filter { $0.value != before[$0.key, default: 0] }
        guard moved.count == 1, let (target, count) = moved.first, count - before[target, default: 0] == 1 else { return (status, nil) }
        return (status, target)
    }

    /// Waits (bounded) until an anonymous read of the post is served by the standby, and shows it.
    func waitForStandbyRead(post id: String, _ timeout: Duration = .seconds(30)) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            let read = try await anonymousRead(post: id)
            if read.status == 200, let target = read.target, target != "primary" { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("post \(id) was not read from the standby within \(timeout)")
    }
}

extension ReplicaCluster {
    /// Terminates every live board listener's session on the primary (`LISTEN` in this suite's database), once
    /// `count` of them listen: each instance's pump hears nothing until its listener has reconnected. Returns how many
    /// were terminated.
    static func terminateListeners(count: Int) async throws -> Int {
        let listening = "FROM pg_stat_activity WHERE datname = '\(database)' AND query = 'LISTEN weatherboard_stream'"
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while try await Int(run("psql", "primary", "-Atc", "SELECT count(*) \(listening)")) ?? 0 < count {
            guard clock.now < deadline else { throw TestFailure("fewer than \(count) listeners within 30 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
        return Int(try await run("psql", "primary", "-Atc", "SELECT count(pg_terminate_backend(pid)) \(listening)")) ?? -1
    }
}

/// CONTRACT §12 against two real clusters (a primary and a hot standby on loopback) and two server instances.
/// Serialized: the tests stop, delay and promote the one standby they share.
@Suite("Past one machine: standbys and failover", .serialized, .enabled(if: ReplicaCluster.enabled))
struct ReplicationTests {
    @Test("anonymous reads are served by the standby; a standby lagging a second never shows an account its own write: 500 write-then-read pairs (create, list, edit, mark, report, reply, upload, attach, delete) on alternating instances")
    func readYourWrites() async throws {
        try await ReplicaCluster.run("delay", "0")
        try await ReplicaCluster.withTwoServers(maxLagMilliseconds: 5000) { a, b in
            try await a.waitForStandbyReads()
            try await b.waitForStandbyReads()
            // Anonymous reads go to the standby. A read whose instance has not sampled the primary's read fence within
            // its horizon goes to the primary instead (ReplicaRouter): on a machine loaded by another run, 1 of 20 did.
            // Every read is counted once, by one target, and most go to the standby.
            let before = try await a.readsByTarget()
            for _ in 0..<20 { #expect(try await a.request("GET", "/v1/posts?limit=5").status == 200) }
            let after = try await a.readsByTarget()
            let standbyBefore: Double = before.filter { $0.key != "primary" }.values.reduce(0, +)
            let standbyAfter: Double = after.filter { $0.key != "primary" }.values.reduce(0, +)
            let primary = after["primary", default: 0] - before["primary", default: 0]
            #expect(standbyAfter - standbyBefore + primary == 20)
            #expect(standbyAfter - standbyBefore >= 15, "\(standbyAfter - standbyBefore) of 20 anonymous reads on the standby")

            // Now the standby applies every commit a second late: the lag is real.
            try await ReplicaCluster.run("delay", "1000")
            let servers = [a, b]
            let author = try await a.anonymousAccount()
            let reporter = try await b.anonymousAccount()
            var failures: [String] = []
            var pairs = 0
            var round = 0
            while pairs < 500 {
                let writer = servers[round % 2], reader = servers[(round + 1) % 2]
                round += 1
                // create, then read it (the post, and the author's list)
                let post = try await writer.createPost(author, body: "round \(round) 파전")
                let id = try #require(post["id"] as? String)
                let shown = try await reader.json("GET", "/v1/posts/\(id)", token: author.token)
                if shown.status != 200 { failures.append("create \(id): GET \(shown.status)") }
                pairs += 1
                let listed = try await reader.json("GET", "/v1/posts?authorId=\(author.id)&limit=1", token: author.token)
                if (listed.items.first?["id"] as? String) != id { failures.append("create \(id): not first in the author's list") }
                pairs += 1
                // edit, then read the new body
                let edited = try await writer.json("PATCH", "/v1/posts/\(id)", token: author.token, ["body": "round \(round) 수정"])
                #expect(edited.status == 200)
                let afterEdit = try await reader.json("GET", "/v1/posts/\(id)", token: author.token)
                if afterEdit.object["body"] as? String != "round \(round) 수정" { failures.append("edit \(id): old body") }
                pairs += 1
                // mark helpful (by another account), then read helpedByMe
                #expect(try await writer.json("PUT", "/v1/posts/\(id)/helpful", token: reporter.token).status == 200)
                let marked = try await reader.json("GET", "/v1/posts/\(id)", token: reporter.token)
                if marked.object["helpedByMe"] as? Bool != true { failures.append("mark \(id): helpedByMe not true") }
                pairs += 1
                // report, then read the reporter's reports
                #expect(try await writer.json("POST", "/v1/posts/\(id)/reports", token: reporter.token, ["reason": "spam"]).status == 201)
                let reports = try await reader.json("GET", "/v1/accounts/me/reports?limit=1", token: reporter.token)
                if reports.items.first?["postId"] as? String != id { failures.append("report \(id): not in my reports") }
                pairs += 1
                // reply (by another account), then read the post's replies
                let replied = try await writer.json("POST", "/v1/posts/\(id)/replies", token: reporter.token, ["body": "round \(round) 댓글"])
                #expect(replied.status == 201, "\(replied.text)")
                let replyID = replied.object["id"] as? String ?? "-"
                let thread = try await reader.json("GET", "/v1/posts/\(id)/replies", token: reporter.token)
                if !thread.items.contains(where: { $0["id"] as? String == replyID }) { failures.append("reply \(replyID): not in the post's replies") }
                pairs += 1
                // upload (every tenth round), then read it, attach it, and read the post with it
                if round % 10 == 1 {
                    let uploaded = try await writer.upload(try await MediaFixtures.png, alt: "창가", token: author.token)
                    #expect(uploaded.status == 201, "\(uploaded.text)")
                    let mediaID = try #require(uploaded.object["id"] as? String)
                    if try await reader.json("GET", "/v1/media/\(mediaID)", token: author.token).status != 200 { failures.append("upload \(mediaID): GET not 200") }
                    pairs += 1
                    #expect(try await reader.json("PATCH", "/v1/posts/\(id)", token: author.token, ["mediaIds": [mediaID]]).status == 200)
                    let withMedia = try await writer.json("GET", "/v1/posts/\(id)", token: author.token)
                    if (withMedia.object["media"] as? [[String: Any]])?.count != 1 { failures.append("attach \(mediaID) to \(id): not shown") }
                    pairs += 1
                }
                // delete, then read: gone for the author
                #expect(try await writer.json("DELETE", "/v1/posts/\(id)", token: author.token).status == 204)
                let deleted = try await reader.json("GET", "/v1/posts/\(id)", token: author.token)
                if deleted.status != 404 { failures.append("delete \(id): GET \(deleted.status)") }
                pairs += 1
            }
            #expect(failures.isEmpty, "\(failures.count) reads missed their own write: \(failures.prefix(5))")
            try await ReplicaCluster.run("delay", "0")
        }
    }

    @Test("with the standby lagging, a logged-out token is refused at once on both instances, and so is a banned account's post")
    func atOnceRules() async throws {
        try await ReplicaCluster.run("delay", "2000")
        try await ReplicaCluster.resettingDelay { try await ReplicaCluster.withTwoServers(maxLagMilliseconds: 5000) { a, b in
            let (member, _, _) = try await a.registeredAccount()
            #expect(try await b.json("GET", "/v1/accounts/me", token: member.token).status == 200)
            #expect(try await a.json("DELETE", "/v1/sessions/current", token: member.token).status == 204)
            #expect(try await b.json("GET", "/v1/accounts/me", token: member.token).status == 401)
            #expect(try await a.json("GET", "/v1/posts?limit=1", token: member.token).status == 401)

            let target = try await b.anonymousAccount()
            let moderator = try await a.anonymousAccount()
            try await a.grantRole("moderator", to: moderator)
            #expect(try await a.json("POST", "/v1/moderation/accounts/\(target.id)/ban", token: moderator.token, ["until": NSNull(), "reason": "spam"]).status == 200)
            let refused = try await b.json("POST", "/v1/posts", token: target.token, ["weatherType": "rain", "category": "food", "body": "banned", "regionId": "1835848"])
            #expect(refused.status == 403)
            #expect(refused.errorCode == "account_banned")
        } }
    }

    @Test("with every instance's live board listener terminated and the standby four seconds behind, a moderator's removal and an author's deletion answer 404 to the next anonymous read on both instances, served by the primary")
    func fenceWithoutTheStream() async throws {
        try await ReplicaCluster.run("delay", "0")
        try await ReplicaCluster.resettingDelay { try await ReplicaCluster.withTwoServers(maxLagMilliseconds: 15000) { a, b in
            let author = try await a.anonymousAccount()
            let moderator = try await a.anonymousAccount()
            try await a.grantRole("moderator", to: moderator)
            let removed = try #require(try await a.createPost(author, body: "모더레이터가 지울 글")["id"] as? String)
            let deleted = try #require(try await a.createPost(author, body: "글쓴이가 지울 글")["id"] as? String)
            // Both posts are on the standby, and each instance reads them there.
            for server in [a, b] {
                for id in [removed, deleted] { try await server.waitForStandbyRead(post: id) }
            }
            // From now on the standby applies every commit four seconds late: longer than a loaded machine takes from a
            // write to the next read (with one second, a run that also seeded a 1M-row plan test read a deletion the
            // standby had already applied, correctly, from the standby: the test then proved nothing about the fence).
            try await ReplicaCluster.run("delay", "4000")
            for server in [a, b] {
                let stale = try await server.anonymousRead(post: removed)
                #expect(stale.status == 200 && stale.target != nil && stale.target != "primary", "before the removal: \(stale)")
            }

            #expect(try await ReplicaCluster.terminateListeners(count: 2) >= 2)
            let decision = try await a.json("POST", "/v1/moderation/posts/\(removed)/decision", token: moderator.token, ["action": "remove"])
            #expect(decision.status == 200, "\(decision.text)")
            for (name, server) in [("a", a), ("b", b)] {
                let read = try await server.anonymousRead(post: removed)
                #expect(read.status == 404 && read.target == "primary", "removed post read on \(name): \(read)")
            }

            #expect(try await ReplicaCluster.terminateListeners(count: 2) >= 2)
            #expect(try await b.json("DELETE", "/v1/posts/\(deleted)", token: author.token).status == 204)
            for (name, server) in [("b", b), ("a", a)] {
                let read = try await server.anonymousRead(post: deleted)
                #expect(read.status == 404 && read.target == "primary", "deleted post read on \(name): \(read)")
            }
        } }
    }

    @Test("the standby stopped: no client error, reads move to the primary; back, reads return to it")
    func standbyStopped() async throws {
        try await ReplicaCluster.run("delay", "0")
        try await ReplicaCluster.withTwoServers { a, _ in
            try await a.waitForStandbyReads()
            try await ReplicaCluster.run("standby-stop")
            let primaryBefore = try await a.readsByTarget()["primary", default: 0]
            var errors = 0
            for _ in 0..<200 where try await a.request("GET", "/v1/posts?limit=5").status != 200 { errors += 1 }
            #expect(errors == 0)
            #expect(try await a.readsByTarget()["primary", default: 0] - primaryBefore >= 200)
            try await ReplicaCluster.run("standby-start")
            try await a.waitForStandbyReads()
        }
    }

    @Test("failover: the primary stopped and the standby promoted; writes succeed again within 10 s with no restart, every acknowledged write is there, and a live board stream opened before the switch gets them all and the next post")
    func failover() async throws {
        try await ReplicaCluster.run("delay", "0")
        try await ReplicaCluster.withTwoServers { a, b in
            let author = try await a.anonymousAccount()
            // A live board reader on b, across the switch: its instance's listener must follow the primary.
            let reader = try await b.stream("/v1/stream")
            defer { reader.close() }
            _ = try await StreamTests.opening(reader)
            var acknowledged: [String] = []
            for i in 0..<20 { acknowledged.append(try #require(try await a.createPost(author, body: "before \(i)")["id"] as? String)) }
            try await ReplicaCluster.run("promote")
            let clock = ContinuousClock()
            let start = clock.now
            var serverErrors = 0
            var written = false
            // A bound against hanging, not a claim of speed (bench/replica times the switch).
            while clock.now - start < .seconds(60) {
                let response = try await b.json("POST", "/v1/posts", token: author.token, ["weatherType": "rain", "category": "food", "body": "after", "regionId": "1835848"])
                if response.status == 201 {
                    written = true
                    break
                }
                if response.status == 500 { serverErrors += 1 }
                #expect(response.status == 503, "during the switch: \(response.status) \(response.text)")
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(written, "no write succeeded within 60 s of the promotion")
            // A post made after the switch reaches the stream opened before it (the events before the switch came too).
            let later = try #require(try await a.createPost(author, body: "after the switch")["id"] as? String)
            var seen: Set<String> = []
            while !seen.contains(later) {
                let message = try await reader.nextEvent(timeout: .seconds(30))
                if message.event == "post", let id = message.postID { seen.insert(id) }
            }
            #expect(Set(acknowledged).isSubset(of: seen), "posts acknowledged before the switch missing from the stream: \(Set(acknowledged).subtracting(seen).count)")
            #expect(serverErrors == 0)
            for id in acknowledged {
                #expect(try await a.json("GET", "/v1/posts/\(id)", token: author.token).status == 200, "post \(id) lost in the failover")
            }
        }
        // The old primary follows the new one: the pair is whole again for the next run.
        try await ReplicaCluster.run("rebuild")
    }
}

/// The variables of CONTRACT §11 and §12, read and checked like every other (no cluster needed).
@Suite("Standby and stream configuration")
struct ReplicaConfigurationTests {
    @Test("DATABASE_READ_URL and DATABASE_MAX_REPLICA_LAG_MS are read and checked; a read URL's hosts become one standby each")
    func readConfiguration() throws {
        let defaults = try AppConfiguration(environment: [:])
        #expect(defaults.databaseReadURL == nil)
        #expect(defaults.maxReplicaLagMilliseconds == 500)
        let set = try AppConfiguration(environment: ["DATABASE_READ_URL": "postgresql://u:p@db2:5433,db3/weatherboard", "DATABASE_MAX_REPLICA_LAG_MS": "250"])
        #expect(set.databaseReadURL == "postgresql://u:p@db2:5433,db3/weatherboard")
        #expect(set.maxReplicaLagMilliseconds == 250)
        #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: ["DATABASE_READ_URL": "postgresql://u:p@db2/x?nonsense_option=1"]) }
        #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: ["DATABASE_MAX_REPLICA_LAG_MS": "-1"]) }
        #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: ["DATABASE_MAX_REPLICA_LAG_MS": "1e300"]) }
        // Each host its own conninfo, every other setting kept, quotes escaped.
        let hosts = try ReplicaRouter.splitHosts("postgresql://u:p%27q@db2:5433,db3:5434/weather?sslmode=require")
        #expect(hosts.map(\.0) == ["db2:5433", "db3:5434"])
        #expect(hosts.allSatisfy { $0.1.contains("sslmode='require'") && $0.1.contains("password='p\\'q'") && $0.1.contains("dbname='weather'") })
        #expect(try ReplicaRouter.splitHosts("postgresql://u@a,b:6000/db").map(\.0) == ["a:5432", "b:6000"])
        #expect(throws: PostgresError.self) { try ReplicaRouter.splitHosts("host=a,b port=1,2,3 dbname=x") }
    }

    @Test("reads by policy, with the test database standing in for a standby that has replayed everything: .primary goes to the primary, a standby read waits for a first sample of the primary, a fenced write raises this router's fence past its commit at once, and a fence another instance stored is honoured from the next sample")
    func routingByPolicy() async throws {
        try await TestDatabase.migrated.value
        let primary = TestDatabase.pool()
        defer { primary.shutdown() }
        // The reader's horizon no sample outlives on a loaded machine: its routing depends on what was sampled, not on
        // when. The writer's is the default (a fenced write waits it out).
        func router(_ horizon: Duration) throws -> ReplicaRouter {
            try ReplicaRouter(
                primary: primary, readConninfo: TestDatabase.url, configuration: primary.configuration, maxLagMilliseconds: 60_000,
                fenceHorizon: horizon, logger: testLogger
            )
        }
        let reader = try router(.seconds(600)), other = try router(ReplicaRouter.defaultFenceHorizon)
        defer { reader.shutdown(); other.shutdown() }
        #expect(reader.target(for: .anyStandby) == nil, "no sample of the primary yet")
        // The stand-in's position is its WAL write position, which other suites' bulk loads can leave behind the fence
        // (an insert position) for a moment: sample until it has caught up (bounded).
        func sampleUntilFresh(_ router: ReplicaRouter) async throws {
            for _ in 0..<100 {
                await router.sample()
                if router.target(for: .anyStandby) == 0 { return }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw TestFailure("the stand-in never caught up with the fence")
        }
        try await sampleUntilFresh(reader)
        #expect(reader.target(for: .standby(after: 1)) == 0)
        #expect(reader.target(for: .primary) == nil)
        #expect(reader.target(for: .standby(after: .max)) == nil)

        // A fenced write raises its own router's fence, at once, past its commit record.
        let written = try await primary.fencedTransaction(other) { connection in
            // With a transaction id, the COMMIT writes a commit record past this position.
            try connection.query("SELECT pg_current_xact_id()::text AS xid, (pg_current_wal_insert_lsn() - '0/0')::bigint AS lsn")[0].decode(Int64.self, "lsn")
        }
        let stored = try await primary.query("SELECT lsn FROM read_fence")[0].decode(Int64.self, "lsn")
        #expect(stored > written)
        #expect(other.fence > written && other.fence <= stored)

        // Another instance's fence, past anything the stand-in has: honoured from the next sample on.
        try await sampleUntilFresh(reader)
        try await primary.execute("UPDATE read_fence SET lsn = lsn + \(Int64(1) << 40)")
        await reader.sample()
        let fenced = reader.target(for: .anyStandby)
        try await primary.execute("UPDATE read_fence SET lsn = \(stored)")
        #expect(fenced == nil)
        #expect(reader.fence > stored)
    }

    @Test("STREAM_* variables are read and checked")
    func streamConfiguration() throws {
        let defaults = try AppConfiguration(environment: [:])
        let values: [Int] = [defaults.streamHeartbeatSeconds, defaults.streamBacklogSeconds, defaults.streamBufferEvents, defaults.streamMaxPerClient, defaults.streamMax]
        #expect(values == [15, 3600, 256, 8, 20_000])
        #expect(try AppConfiguration(environment: ["STREAM_MAX_PER_CLIENT": "2"]).streamMaxPerClient == 2)
        for bad in [("STREAM_HEARTBEAT_SECONDS", "0"), ("STREAM_BUFFER_EVENTS", "-5"), ("STREAM_MAX", "abc"), ("STREAM_BACKLOG_SECONDS", "99999999999999999999")] {
            #expect(throws: ConfigurationError.self) { try AppConfiguration(environment: [bad.0: bad.1]) }
        }
    }
}
