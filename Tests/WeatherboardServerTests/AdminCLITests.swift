import CurlClient
import Foundation
import Subprocess
import SystemPackage
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `weatherboard-admin` end to end: the built binary, run as a subprocess against a live test server,
/// with its own `XDG_CONFIG_HOME`.
@Suite("weatherboard-admin CLI")
struct AdminCLITests {
    @Test("login through --password-stdin stores a 0600 token; queue, show, remove, log; logout revokes it")
    func moderatorWorkflow() async throws {
        try await withTestServer { server in
            let cli = try AdminCLI()
            defer { cli.cleanUp() }
            let (moderator, username, password) = try await server.registeredAccount(prefix: "mod")
            try await server.grantRole("moderator", to: moderator)

            // login
            let login = try await cli.run(["login", "--server", server.baseURL, "--username", username, "--password-stdin"], stdin: password + "\n")
            #expect(login.status == 0, "login: \(login)")
            #expect(login.stdout.contains("logged in to \(server.baseURL) as \(username)"))
            let attributes = try FileManager.default.attributesOfItem(atPath: cli.credentialsPath)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            let directory = try FileManager.default.attributesOfItem(atPath: (cli.credentialsPath as NSString).deletingLastPathComponent)
            #expect((directory[.posixPermissions] as? NSNumber)?.intValue == 0o700)
            let stored = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cli.credentialsPath))) as? [String: Any]
            )
            #expect(stored["server"] as? String == server.baseURL)
            #expect(stored["username"] as? String == username)
            let token = try #require(stored["token"] as? String)

            // a reported post, with its excerpt in Korean
            let author = try await server.anonymousAccount()
            let post = try await server.createPost(author, title: "광고", body: "싸게 팝니다 지금 연락 주세요")
            let postID = try #require(post["id"] as? String)
            for reason in ["spam", "spam", "abuse"] {
                let reporter = try await server.anonymousAccount()
                let report = try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporter.token, ["reason": reason])
                try #require(report.status == 201, "report answered \(report.status): \(report.text)")
            }

            // Two helpful marks: the moderator's (registered: trusted) and a fresh anonymous account's (not).
            #expect(try await server.json("PUT", "/v1/posts/\(postID)/helpful", token: moderator.token).status == 200)
            #expect(try await server.json("PUT", "/v1/posts/\(postID)/helpful", token: try await server.anonymousAccount().token).status == 200)

            // queue --json lists it
            let queueJSON = try await cli.run(["queue", "--json", "--limit", "1000"])
            #expect(queueJSON.status == 0, "queue --json: \(queueJSON)")
            let page = try #require(try JSONSerialization.jsonObject(with: Data(queueJSON.stdout.utf8)) as? [String: Any])
            #expect(page.keys.contains("nextCursor"))
            let items = try #require(page["items"] as? [[String: Any]])
            let item = try #require(items.first { ($0["post"] as? [String: Any])?["id"] as? String == postID })
            #expect(item["openReportCount"] as? Int == 3)
            #expect((item["reports"] as? [[String: Any]])?.count == 3)
            #expect((item["post"] as? [String: Any])?["trustedHelpfulCount"] as? Int == 1)
            #expect((item["post"] as? [String: Any])?["helpfulCount"] as? Int == 2)
            #expect((item["post"] as? [String: Any])?["helpedByMe"] as? Bool == true, "the moderator's own mark")

            // the table: id, reasons, excerpt
            let queue = try await cli.run(["queue", "--limit", "1000"])
            #expect(queue.status == 0, "queue: \(queue)")
            let row = try #require(queue.stdout.split(separator: "\n").first { $0.hasPrefix(postID + " ") }, "no row for \(postID): \(queue.stdout)")
            #expect(row.contains("spam×2, abuse"))
            #expect(row.contains("광고 — 싸게 팝니다"))
            let header = try #require(queue.stdout.split(separator: "\n").first)
            #expect(header.contains("TRUSTED"))
            // The TRUSTED column holds 1 (right-aligned before the excerpt).
            #expect(row.contains(" 1  광고"), "row: \(row)")

            // show: the post and its reports
            let show = try await cli.run(["show", postID])
            #expect(show.status == 0, "show: \(show)")
            #expect(show.stdout.contains("post \(postID)"))
            #expect(show.stdout.contains("open reports (3): spam×2, abuse"))
            #expect(show.stdout.contains("helpful marks: 2 (1 trusted)"), "show: \(show.stdout)")
            #expect(show.stdout.contains("conditions: none recorded"), "\(show.stdout)")
            // A post with conditions (CONTRACT §9) shows them.
            try await server.dependencies.database.execute(
                """
                UPDATE posts SET conditions_weather_type = 'rain', conditions_feels_like = 27.9, conditions_band = 'warm',
                                 conditions_observed_at = '2026-11-22T09:30:00Z' WHERE id = \(Int(postID)!)
                """
            )
            let withConditions = try await cli.run(["show", postID])
            #expect(withConditions.stdout.contains("conditions: rain, feels like 27.9 °C (warm), observed 2026-11-22"), "\(withConditions.stdout)")

            // remove
            let remove = try await cli.run(["remove", postID, "--note", "commercial spam"])
            #expect(remove.status == 0, "remove: \(remove)")
            #expect(remove.stdout == "removed post \(postID); resolved 3 reports\n")
            let publicView = try await server.json("GET", "/v1/posts/\(postID)")
            #expect(publicView.status == 404)

            // show of a post without open reports falls back to the post itself
            let showRemoved = try await cli.run(["show", postID, "--json"])
            #expect(showRemoved.status == 0, "show --json: \(showRemoved)")
            let shown = try #require(try JSONSerialization.jsonObject(with: Data(showRemoved.stdout.utf8)) as? [String: Any])
            #expect((shown["post"] as? [String: Any])?["status"] as? String == "removed")
            #expect(shown["openReportCount"] as? Int == 0)

            // log --json shows the removal, newest first
            let log = try await cli.run(["log", "--json", "--limit", "100"])
            #expect(log.status == 0, "log --json: \(log)")
            let entries = try #require((try JSONSerialization.jsonObject(with: Data(log.stdout.utf8)) as? [String: Any])?["items"] as? [[String: Any]])
            let entry = try #require(entries.first { $0["targetId"] as? String == postID && $0["action"] as? String == "remove" })
            #expect(entry["note"] as? String == "commercial spam")
            #expect(entry["moderatorId"] as? String == moderator.id)
            #expect(entry["targetType"] as? String == "post")
            // The log is global and newest first: other suites' moderators write to it meanwhile (a ban wave writes dozens
            // of entries), so the table is read at the largest page, and the line looked for is this post's removal.
            let logTable = try await cli.run(["log", "--limit", "100"])
            #expect(logTable.status == 0)
            #expect(logTable.stdout.split(separator: "\n").contains { $0.contains("remove") && $0.contains("post \(postID)") }, "\(logTable.stdout)")

            // a missing post: 404, one line
            let missing = try await cli.run(["remove", "999999999", "--note", "x"])
            #expect(missing.status == 6)  // not found
            #expect(missing.stderrLines.count == 1, "\(missing)")
            #expect(missing.stdout.isEmpty)

            // logout revokes the token and deletes the file
            let logout = try await cli.run(["logout"])
            #expect(logout.status == 0, "logout: \(logout)")
            #expect(!FileManager.default.fileExists(atPath: cli.credentialsPath))
            let revoked = try await server.json("GET", "/v1/accounts/me", token: token)
            #expect(revoked.status == 401)
        }
    }

    @Test("a scripted review bans the author of a reported post and dismisses it, skipping other posts")
    func scriptedReview() async throws {
        try await withTestServer { server in
            let cli = try AdminCLI()
            defer { cli.cleanUp() }
            let (moderator, username, password) = try await server.registeredAccount(prefix: "mod")
            try await server.grantRole("moderator", to: moderator)
            let login = try await cli.run(["login", "--server", server.baseURL, "--username", username, "--password-stdin"], stdin: password + "\n")
            try #require(login.status == 0, "login: \(login)")

            let author = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author, body: "review me")["id"] as? String)
            let reporter = try await server.anonymousAccount()
            let report = try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporter.token, ["reason": "abuse", "note": "rude"])
            try #require(report.status == 201)

            // Other tests' posts may be queued too: skip them, act on ours. The driver answers each post as
            // the CLI shows it (reading its output, no timing involved), then ends the input, which quits.
            let review = try await cli.run(["review"]) { line in
                guard line.hasPrefix("post ") else { return nil }
                guard line.hasPrefix("post \(postID) ") else { return .respond("s\n") }
                return .respondAndClose("b\nabusive posts\n7\nd\n")
            }
            #expect(review.status == 0, "review: \(review)")
            #expect(review.stdout.contains("banned account \(author.id) until "), "\(review.stdout)")
            #expect(review.stdout.contains("dismissed post \(postID); resolved 1 report; post is visible"), "\(review.stdout)")
            #expect(review.stdout.contains("dismissed 1"))

            let reports = try await server.json("GET", "/v1/accounts/me/reports", token: reporter.token)
            #expect(reports.items.first { $0["postId"] as? String == postID }?["outcome"] as? String == "dismissed")
            let me = try await server.json("GET", "/v1/accounts/me", token: author.token)
            #expect(me.object["banned"] as? Bool == true)
            #expect(me.object["bannedUntil"] is String)

            // The queue no longer lists it; a plain-lines review with only `q` quits cleanly.
            let queue = try await cli.run(["queue", "--json", "--limit", "1000"])
            let page = try JSONSerialization.jsonObject(with: Data(queue.stdout.utf8)) as? [String: Any]
            let queuedPosts = (page?["items"] as? [[String: Any]] ?? []).compactMap { ($0["post"] as? [String: Any])?["id"] as? String }
            #expect(page != nil)
            #expect(!queuedPosts.contains(postID))
            let quit = try await cli.run(["review"], stdin: "q\n")
            #expect(quit.status == 0, "review q: \(quit)")

            // unban
            let unban = try await cli.run(["unban", author.id])
            #expect(unban.status == 0, "unban: \(unban)")
            #expect(try await server.json("GET", "/v1/accounts/me", token: author.token).object["banned"] as? Bool == false)
        }
    }

    @Test("search: a spam wave's link found in every status, as a table and as JSON; a query folded empty is one line and a non-zero exit")
    func search() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let cli = try AdminCLI()
            defer { cli.cleanUp() }
            let (moderator, username, password) = try await server.registeredAccount(prefix: "mod")
            try await server.grantRole("moderator", to: moderator)
            #expect(try await cli.run(["login", "--server", server.baseURL, "--username", username, "--password-stdin"], stdin: password + "\n").status == 0)
            let link = "spam-\(UInt32.random(in: 0...UInt32.max)).example"
            let spammer = try await server.anonymousAccount()
            var ids: [String] = []
            for body in ["싸게 팝니다 \(link)", "지금 연락 \(link.uppercased())", "무료 쿠폰 \(link)"] {
                ids.append(try #require(try await server.createPost(spammer, body: body)["id"] as? String))
            }
            try await server.dependencies.database.execute("UPDATE posts SET status = 'removed' WHERE id = \(Int(ids[0])!)")
            #expect(try await server.json("DELETE", "/v1/posts/\(ids[1])", token: spammer.token).status == 204)

            let table = try await cli.run(["search", link])
            #expect(table.status == 0, "search: \(table)")
            let rows = table.stdout.split(separator: "\n")
            #expect(rows.first?.contains("STATUS") == true)
            for (id, status) in zip(ids, ["removed", "deleted", "visible"]) {
                let row = try #require(rows.first { $0.hasPrefix(id + " ") }, "no row for \(id): \(table.stdout)")
                #expect(row.contains(status), "\(row)")
            }
            let json = try await cli.run(["search", "싸게 " + link, "--json"])
            #expect(json.status == 0, "search --json: \(json)")
            let page = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect((page["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [ids[0]])
            #expect(page.keys.contains("nextCursor"))
            let empty = try await cli.run(["search", "\u{200B}"])
            #expect(empty.status != 0 && empty.stderrLines.count == 1, "\(empty)")
        }
    }

    @Test("failures: one line on stderr and a non-zero exit")
    func failures() async throws {
        try await withTestServer { server in
            let cli = try AdminCLI()
            defer { cli.cleanUp() }

            // a malformed server URL
            let badURL = try await cli.run(["login", "--server", "ftp://example.com", "--username", "someone", "--password-stdin"], stdin: "x\n")
            #expect(badURL.status == 64)
            #expect(badURL.stderrLines.count == 1)

            // not logged in
            let notLoggedIn = try await cli.run(["queue"])
            #expect(notLoggedIn.status == 4)
            #expect(notLoggedIn.stderrLines == ["not logged in: run weatherboard-admin login --server URL --username NAME"])

            // unreachable server
            let unreachable = try await cli.run(["login", "--server", "http://127.0.0.1:1", "--username", "someone", "--password-stdin"], stdin: "x\n")
            #expect(unreachable.status == 3)
            #expect(unreachable.stderrLines.count == 1)
            #expect(unreachable.stderrLines.first?.hasPrefix("cannot reach http://127.0.0.1:1: ") == true, "\(unreachable)")

            // wrong password
            let (member, memberName, memberPassword) = try await server.registeredAccount(prefix: "member")
            let wrong = try await cli.run(
                ["login", "--server", server.baseURL, "--username", memberName, "--password-stdin"], stdin: "not the password\n"
            )
            #expect(wrong.status != 0)
            #expect(wrong.stderrLines.count == 1, "\(wrong)")

            // a member cannot log in as a moderator; nothing is stored and the session is revoked
            let refused = try await cli.run(["login", "--server", server.baseURL, "--username", memberName, "--password-stdin"], stdin: memberPassword + "\n")
            #expect(refused.status == 5)
            #expect(refused.stderrLines.count == 1, "\(refused)")
            #expect(refused.stderrLines.first?.contains("not a moderator") == true)
            #expect(!FileManager.default.fileExists(atPath: cli.credentialsPath))

            // a moderator who lost the role: 403 with the server's message
            let (moderator, username, password) = try await server.registeredAccount(prefix: "mod")
            try await server.grantRole("moderator", to: moderator)
            let login = try await cli.run(["login", "--server", server.baseURL, "--username", username, "--password-stdin"], stdin: password + "\n")
            try #require(login.status == 0, "login: \(login)")
            try await server.grantRole("member", to: moderator)
            let forbidden = try await cli.run(["queue"])
            #expect(forbidden.status == 5)
            #expect(forbidden.stderrLines == ["this needs the moderator or admin role"], "\(forbidden)")
            let forbiddenBan = try await cli.run(["ban", member.id, "--reason", "x"])
            #expect(forbiddenBan.status != 0)
            #expect(forbiddenBan.stderrLines.count == 1)

            // a revoked token: session expired, with the command to run
            let stored = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cli.credentialsPath))) as? [String: Any]
            let token = try #require(stored?["token"] as? String)
            #expect(try await server.json("DELETE", "/v1/sessions/current", token: token).status == 204)
            let expired = try await cli.run(["log"])
            #expect(expired.status == 4)
            #expect(expired.stderrLines == ["session expired: run weatherboard-admin login --server \(server.baseURL) --username \(username)"])

            // --server overrides the stored server
            let elsewhere = try await cli.run(["queue", "--server", "http://127.0.0.1:1"])
            #expect(elsewhere.status == 3)
            #expect(elsewhere.stderrLines.count == 1)
            #expect(elsewhere.stderrLines.first?.hasPrefix("cannot reach http://127.0.0.1:1") == true)
        }
    }
}

/// Runs the built `weatherboard-admin` with a private `XDG_CONFIG_HOME`.
struct AdminCLI: Sendable {
    let binary: URL
    let configHome: URL

    var credentialsPath: String { configHome.appendingPathComponent("weatherboard/credentials.json").path }

    init() throws {
        binary = try Self.locateBinary()
        configHome = FileManager.default.temporaryDirectory.appendingPathComponent("wb-admin-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: configHome, withIntermediateDirectories: true)
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: configHome)
    }

    /// Next to the test bundle (`.build/<triple>/debug/`), or under the package's `.build/debug/`.
    static func locateBinary() throws -> URL {
        var candidates: [URL] = []
        let argument0 = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = argument0.deletingLastPathComponent()
        for _ in 0..<4 {  // the test binary may sit inside an .xctest bundle
            candidates.append(directory.appendingPathComponent("weatherboard-admin"))
            directory = directory.deletingLastPathComponent()
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(packageRoot.appendingPathComponent(".build/debug/weatherboard-admin"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw TestFailure("weatherboard-admin is not built (looked in \(candidates.map(\.path))): run `swift build --build-tests`")
        }
        return found
    }

    struct Result: Sendable, CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String
        var stderrLines: [String] { stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
        var description: String { "exit \(status), stdout: \(stdout.debugDescription), stderr: \(stderr.debugDescription)" }
    }

    enum Reply: Sendable {
        case respond(String)
        case respondAndClose(String)
    }

    /// Runs the CLI with `stdin` as its whole input.
    func run(_ arguments: [String], stdin: String = "") async throws -> Result {
        try await run(arguments, initialInput: stdin, closeInput: true) { _ in nil }
    }

    /// Runs the CLI, answering lines of its standard output as they appear; input ends on `.respondAndClose`.
    func run(_ arguments: [String], respond: @escaping @Sendable (String) -> Reply?) async throws -> Result {
        try await run(arguments, initialInput: "", closeInput: false, respond: respond)
    }

    private func run(
        _ arguments: [String], initialInput: String, closeInput: Bool, respond: @escaping @Sendable (String) -> Reply?
    ) async throws -> Result {
        // A write to a CLI that has already exited must fail with EPIPE, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        // Async (swift-subprocess): no cooperative thread, which the server under test needs, waits on a pipe.
        let outcome = try await Subprocess.run(
            .path(FilePath(binary.path)),
            arguments: Arguments(arguments),
            environment: .inherit.updating(["XDG_CONFIG_HOME": configHome.path]),
            input: .inputWriter,
            output: .sequence,
            error: .string(limit: 1 << 20)
        ) { execution in
            let writer = execution.standardInputWriter
            var inputOpen = true
            if !initialInput.isEmpty { _ = try? await writer.write(initialInput) }
            if closeInput {
                try? await writer.finish()
                inputOpen = false
            }
            // Standard output as it comes, line by line, answered through standard input.
            var collected: [UInt8] = []
            var pending: [UInt8] = []
            for try await chunk in execution.standardOutput {
                chunk.withUnsafeBytes { bytes in
                    collected.append(contentsOf: bytes)
                    pending.append(contentsOf: bytes)
                }
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    guard inputOpen, let reply = respond(line) else { continue }
                    switch reply {
                    case .respond(let text):
                        _ = try? await writer.write(text)
                    case .respondAndClose(let text):
                        _ = try? await writer.write(text)
                        try? await writer.finish()
                        inputOpen = false
                    }
                }
            }
            if inputOpen { try? await writer.finish() }
            return String(decoding: collected, as: UTF8.self)
        }
        let status: Int32
        switch outcome.terminationStatus {
        case .exited(let code): status = code
        case .signaled(let signal): status = 128 + signal
        }
        return Result(status: status, stdout: outcome.closureResult, stderr: outcome.standardError)
    }
}
