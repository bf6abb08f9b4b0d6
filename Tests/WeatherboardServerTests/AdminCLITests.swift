import CurlClient
import Foundation
import NIOCore
import NIOPosix
import Subprocess
import Synchronization
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
            let entry = try #require(entries.first { $0["targetType"] as? String == "post" && $0["targetId"] as? String == postID && $0["action"] as? String == "remove" })
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
            for (id, status) in [(ids[0], "removed"), (ids[2], "visible")] {
                let row = try #require(rows.first { $0.hasPrefix(id + " ") }, "no row for \(id): \(table.stdout)")
                #expect(row.contains(status), "\(row)")
            }
            // Deleted posts reach moderators only by id and in the queue (CONTRACT §1).
            #expect(!rows.contains { $0.hasPrefix(ids[1] + " ") }, "a deleted post in a moderator's search: \(table.stdout)")
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

    @Test("watch --json: a report and its resolution arrive as JSON lines while the CLI streams the queue; SIGINT ends it with 0")
    func watch() async throws {
        try await withTestServer { server in
            let cli = try AdminCLI()
            defer { cli.cleanUp() }
            let (moderator, username, password) = try await server.registeredAccount(prefix: "mod")
            try await server.grantRole("moderator", to: moderator)
            let login = try await cli.run(["login", "--server", server.baseURL, "--username", username, "--password-stdin"], stdin: password + "\n")
            try #require(login.status == 0, "login: \(login)")
            let author = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author, title: "실시간", body: "지켜보는 중")["id"] as? String)
            let reporter = try await server.anonymousAccount()

            let watch = try await cli.runLive(["watch", "--json"]) { live in
                // Said on standard error once the stream's first message is in: the server has its place, so the report
                // filed from here on reaches this watch.
                let watching = await live.next { !$0.isOutput && $0.text.hasPrefix("watching the moderation queue on \(server.baseURL)") }
                try #require(watching != nil, "no connection: \(live.transcript)")
                let report = try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporter.token, ["reason": "spam", "note": "광고"])
                try #require(report.status == 201, "report answered \(report.status): \(report.text)")

                // Other suites' reports stream by too: the line for this post is the one looked for.
                let reportEvent = await live.nextEvent {
                    $0["event"] as? String == "report" && (($0["data"] as? [String: Any])?["post"] as? [String: Any])?["id"] as? String == postID
                }
                let reported = try #require(reportEvent, "no report event for post \(postID): \(live.transcript)")
                #expect(Set(reported.keys) == ["id", "event", "data"])
                let reportID = try #require(reported["id"] as? String)
                #expect(!reportID.isEmpty)
                let item = try #require(reported["data"] as? [String: Any])
                #expect(item["openReportCount"] as? Int == 1)
                let reports = try #require(item["reports"] as? [[String: Any]])
                #expect(reports.count == 1 && reports.first?["reason"] as? String == "spam" && reports.first?["note"] as? String == "광고", "\(reports)")
                #expect(item["firstReportedAt"] is String)
                #expect((item["post"] as? [String: Any])?["title"] as? String == "실시간")

                let decision = try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "dismiss"])
                try #require(decision.status == 200, "decision answered \(decision.status): \(decision.text)")
                let resolvedEvent = await live.nextEvent { $0["event"] as? String == "resolved" && ($0["data"] as? [String: Any])?["postId"] as? String == postID }
                let resolved = try #require(resolvedEvent, "no resolved event for post \(postID): \(live.transcript)")
                let data = try #require(resolved["data"] as? [String: Any])
                #expect(data["action"] as? String == "dismiss")
                #expect(data["moderatorId"] as? String == moderator.id)
                #expect((resolved["id"] as? String).map { !$0.isEmpty && $0 != reportID } == true, "\(resolved)")
                live.interrupt()
            }
            #expect(watch.status == 0, "watch: \(watch)")
            // Standard output is JSON lines only, each {"id", "event", "data"}.
            for line in watch.stdout.split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(object.map { Set($0.keys) == ["id", "event", "data"] } == true, "\(line)")
            }
        }
    }

    @Test(
        "watch reads the event stream by WHATWG rules (BOM, comments, CRLF and LF, a line end or a character split between chunks, multi-line data, id-only messages, a cut event), resumes with Last-Event-ID after an ended, a cut and a refused stream, and ends at 401 with one line"
    )
    func watchStreamRules() async throws {
        func chunk(_ bytes: [UInt8]) -> [UInt8] { Array(String(bytes.count, radix: 16).utf8) + [13, 10] + bytes + [13, 10] }
        func chunk(_ text: String) -> [UInt8] { chunk(Array(text.utf8)) }
        // Each reply is its connection's last (`Connection: close`): the scripted server answers one request a connection.
        let streamHead = Array(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".utf8
        )
        func errorReply(_ status: String, _ code: String, _ extra: String = "") -> [[UInt8]] {
            let body = #"{"error":{"code":"\#(code)","message":"scripted \#(code)"}}"#
            return [Array("HTTP/1.1 \(status)\r\nContent-Type: application/json\r\n\(extra)Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)]
        }
        let han = Array("한".utf8)  // three bytes, sent in two chunks
        let replies: [[[UInt8]]] = [
            // 1: a fresh stream, ended cleanly (the terminating chunk) in the middle of an event.
            [
                streamHead,
                chunk([0xEF, 0xBB, 0xBF] + Array("retry: 2000\n".utf8)),
                chunk("id: 7-1\n\n"),  // id-only: the place, no event
                chunk(":\n\n"),  // heartbeat
                chunk("id: 7-2\r\nevent: report\r\ndata: {\"post\":{\"id\":"),
                chunk("\"41\"},\"openReportCount\":2}\r"),
                chunk("\n\r\n"),  // the \n of the \r\n above, then the blank line
                chunk(Array("event: custom\nid: 7-3\ndata: {\"a\":\ndata:  [1, \"".utf8) + han.prefix(1)),
                chunk(Array(han.dropFirst()) + Array("\"]}\n\n".utf8)),
                chunk("data: plain text\n\n"),  // no event: "message", and the last id still 7-3
                chunk("id: 7-4\n\n"),
                chunk("id: 9-9\nevent: report\ndata: {\"cut\":"),
                Array("0\r\n\r\n".utf8),
            ],
            // 2: resumed after 7-4; a reset, then the connection is cut (no terminating chunk).
            [streamHead, chunk("retry: 2000\n\n"), chunk("event: reset\nid: 8-0\ndata: {}\n\n")],
            // 3: draining.
            errorReply("503 Service Unavailable", "service_unavailable", "Retry-After: 1\r\n"),
            // 4: the session is gone.
            errorReply("401 Unauthorized", "unauthenticated"),
        ]
        let server = try await ScriptedHTTPServer.start(replies: replies)
        let cli = try AdminCLI()
        defer { cli.cleanUp() }
        let baseURL = "http://127.0.0.1:\(server.port)"
        try cli.storeCredentials(server: baseURL, token: "scripted-token", username: "alice")

        let watch = try await cli.runLive(["watch", "--json"]) { _ in }  // it ends by itself, at the 401
        await server.close()
        #expect(watch.status == 4, "watch: \(watch)")
        let lines = try watch.stdout.split(separator: "\n").map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        try #require(lines.count == 4, "\(watch)")
        #expect(lines[0]["id"] as? String == "7-2" && lines[0]["event"] as? String == "report")
        let report = lines[0]["data"] as? [String: Any]
        #expect((report?["post"] as? [String: Any])?["id"] as? String == "41" && report?["openReportCount"] as? Int == 2)
        #expect(lines[1]["id"] as? String == "7-3" && lines[1]["event"] as? String == "custom")
        let custom = (lines[1]["data"] as? [String: Any])?["a"] as? [Any]
        #expect(custom?.first as? Int == 1 && custom?.last as? String == "한", "\(lines[1])")
        #expect(lines[2]["id"] as? String == "7-3" && lines[2]["event"] as? String == "message" && lines[2]["data"] as? String == "plain text")
        #expect(lines[3]["id"] as? String == "8-0" && lines[3]["event"] as? String == "reset" && (lines[3]["data"] as? [String: Any])?.isEmpty == true)

        // Each connection resumed after the last event (or id-only message) it had, never after the cut one.
        let heads = server.requestHeads
        try #require(heads.count == 4, "\(heads)")
        func lastEventID(_ head: String) -> String? {
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("last-event-id:") }.map { $0.dropFirst("last-event-id:".count).trimmingCharacters(in: .whitespaces) }
        }
        #expect(heads.map(lastEventID) == [nil, "7-4", "8-0", "8-0"], "\(heads)")
        #expect(heads.allSatisfy { $0.hasPrefix("GET /v1/moderation/stream HTTP/1.1\r\n") && $0.lowercased().contains("\r\naccept: text/event-stream") })
        #expect(heads.allSatisfy { $0.contains("\r\nAuthorization: Bearer scripted-token") })

        // Standard error: the connection's news, waits of 1 s (reset after each stream that opened), 2 s (or Retry-After's
        // 1 s, the longer), then the 401's one line, last.
        let news = watch.stderrLines
        #expect(news.first == "watching the moderation queue on \(baseURL) (Ctrl-C stops)", "\(news)")
        #expect(news.contains("the server ended the stream: reconnecting in 1 s"), "\(news)")
        #expect(news.contains("reconnected to \(baseURL), resuming after event 7-4"), "\(news)")
        #expect(news.contains { $0.hasPrefix("connection lost (") && $0.hasSuffix("): reconnecting in 1 s") }, "\(news)")
        #expect(news.contains("scripted service_unavailable (service_unavailable): reconnecting in 2 s"), "\(news)")
        #expect(news.last == "session expired: run weatherboard-admin login --server \(baseURL) --username alice", "\(news)")

        // The lines for people: a report (its newest report's time, the post and its status, reasons, open reports, an
        // excerpt with no escape sequence left), a decision, a reset; then 403 ends the watch with the server's one line.
        let post = #"{"id":"42","weatherType":"rain","category":"food","title":"광고","body":"싸게 팝니다\n지금 \u001b[31m연락","#
            + #""region":{"id":"1835848","name":"Seoul","countryCode":"KR"},"author":{"id":"9","displayName":"x"},"#
            + #""createdAt":"2026-11-22T09:00:00Z","updatedAt":"2026-11-22T09:00:00Z","edited":false,"isMine":false,"media":[],"#
            + #""status":"hidden","helpfulCount":0,"helpedByMe":false,"replyCount":0}"#
        let reports = [("1", "spam", "2026-11-22T09:30:00Z"), ("2", "abuse", "2026-11-22T09:32:00Z"), ("3", "spam", "2026-11-22T09:31:00Z")].map {
            #"{"id":"\#($0.0)","reason":"\#($0.1)","note":null,"reporterId":"3","reportedTitle":null,"reportedBody":"b","createdAt":"\#($0.2)"}"#
        }
        let item = #"{"post":\#(post),"reports":[\#(reports.joined(separator: ","))],"openReportCount":3,"firstReportedAt":"2026-11-22T09:30:00Z"}"#
        let humanServer = try await ScriptedHTTPServer.start(replies: [
            [
                streamHead, chunk("retry: 2000\nid: 1-0\n\n"), chunk("id: 1-1\nevent: report\ndata: \(item)\n\n"),
                chunk("id: 1-2\nevent: resolved\ndata: {\"postId\":\"42\",\"action\":\"remove\",\"moderatorId\":\"7\"}\n\n"),
                chunk("id: 1-3\nevent: resolved\ndata: {\"postId\":\"43\",\"action\":\"restore\",\"moderatorId\":null}\n\n"),
                chunk("id: 1-4\nevent: reset\ndata: {}\n\n"), Array("0\r\n\r\n".utf8),
            ],
            errorReply("403 Forbidden", "forbidden"),
        ])
        let humanURL = "http://127.0.0.1:\(humanServer.port)"
        try cli.storeCredentials(server: humanURL, token: "scripted-token", username: "alice")
        let human = try await cli.runLive(["watch"]) { _ in }
        await humanServer.close()
        #expect(human.status == 5, "watch: \(human)")
        #expect(human.stderrLines.last == "scripted forbidden", "\(human)")
        let printed = human.stdout.split(separator: "\n").map(String.init)
        try #require(printed.count == 4, "\(human)")
        #expect(printed[0] == "2026-11-22T09:32:00Z  REPORT    post 42 [hidden]  spam×2, abuse  3 open reports  광고 — 싸게 팝니다 지금 [31m연락", "\(printed[0])")
        #expect(printed[1].hasSuffix("Z  RESOLVED  post 42  remove  by moderator 7"), "\(printed[1])")
        #expect(printed[2].hasSuffix("Z  RESOLVED  post 43  restore  by an operator"), "\(printed[2])")
        #expect(printed[3].hasSuffix("Z  RESET     events were missed: reload the queue (weatherboard-admin queue)"), "\(printed[3])")
        #expect(!human.stdout.contains("\u{1B}"))
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

    // MARK: A CLI that keeps running (`watch`)

    /// Stores credentials as `login` would (for a scripted server, which has no sessions).
    func storeCredentials(server: String, token: String, username: String) throws {
        let directory = configHome.appendingPathComponent("weatherboard", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let object = ["server": server, "token": token, "username": username]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: credentialsPath))
        _ = chmod(credentialsPath, 0o600)
    }

    /// A line a running CLI wrote, to standard output or to standard error.
    enum Line: Sendable, CustomStringConvertible {
        case output(String)
        case error(String)

        var isOutput: Bool {
            if case .output = self { return true }
            return false
        }

        var text: String {
            switch self {
            case .output(let text), .error(let text): return text
            }
        }

        var description: String { (isOutput ? "out: " : "err: ") + text }
    }

    /// A running CLI as a test drives it: its lines as they come, and Ctrl-C.
    struct Live {
        fileprivate var lines: AsyncStream<Line>.Iterator
        fileprivate let send: @Sendable (Subprocess.Signal) -> Void
        /// Every line taken so far, in order.
        fileprivate(set) var seen: [Line] = []

        var transcript: String { seen.map(\.description).joined(separator: "\n") }

        /// The next line `matching`, the lines before it skipped; nil once the CLI has ended (or the watchdog ended it).
        mutating func next(where matching: (Line) -> Bool) async -> Line? {
            while let line = await lines.next() {
                seen.append(line)
                if matching(line) { return line }
            }
            return nil
        }

        /// The next line of standard output that is a JSON object `matching`.
        mutating func nextEvent(where matching: ([String: Any]) -> Bool) async -> [String: Any]? {
            while let line = await next(where: { $0.isOutput }) {
                if let object = try? JSONSerialization.jsonObject(with: Data(line.text.utf8)) as? [String: Any], matching(object) { return object }
            }
            return nil
        }

        /// Ctrl-C (SIGINT).
        func interrupt() { send(.interrupt) }
    }

    /// Runs a CLI that keeps running: `drive` reads its output and error lines as they come (and may interrupt it),
    /// then the CLI's end is awaited. After `timeoutSeconds` a watchdog kills the CLI, which ends its lines: a test
    /// waiting for a line that never comes fails then instead of hanging.
    func runLive(_ arguments: [String], timeoutSeconds: Int = 90, _ drive: (inout Live) async throws -> Void) async throws -> Result {
        // Async (swift-subprocess): no cooperative thread, which the server under test needs, waits on a pipe.
        let outcome = try await Subprocess.run(
            .path(FilePath(binary.path)),
            arguments: Arguments(arguments),
            environment: .inherit.updating(["XDG_CONFIG_HOME": configHome.path]),
            input: .none,
            output: .sequence,
            error: .sequence
        ) { execution in
            let (lines, sink) = AsyncStream<Line>.makeStream()
            let watchdog = Task {
                try await Task.sleep(for: .seconds(timeoutSeconds))
                try? execution.send(signal: .kill)
            }
            defer { watchdog.cancel() }
            let pipes = LinePipes(sink)
            return try await withThrowingTaskGroup(of: Void.self) { readers in
                readers.addTask {
                    defer { pipes.ended() }
                    try await Self.readLines(execution.standardOutput) { pipes.yield(.output($0)) }
                }
                readers.addTask {
                    defer { pipes.ended() }
                    try await Self.readLines(execution.standardError) { pipes.yield(.error($0)) }
                }
                var live = Live(lines: lines.makeAsyncIterator(), send: { try? execution.send(signal: $0) })
                var failure: (any Error)?
                do {
                    try await drive(&live)
                } catch {
                    failure = error
                    try? execution.send(signal: .kill)
                }
                try await readers.waitForAll()  // the pipes close when the CLI ends
                _ = await live.next { _ in false }  // what it wrote after the driver stopped reading
                if let failure { throw failure }
                return live.seen
            }
        }
        let status: Int32
        switch outcome.terminationStatus {
        case .exited(let code): status = code
        case .signaled(let signal): status = 128 + signal
        }
        let seen = outcome.closureResult
        func text(_ lines: [Line]) -> String { lines.map { $0.text + "\n" }.joined() }
        return Result(status: status, stdout: text(seen.filter(\.isOutput)), stderr: text(seen.filter { !$0.isOutput }))
    }

    /// Calls `each` with every line of `output` (without its `\n`) as the lines come.
    private static func readLines(_ output: SubprocessOutputSequence, _ each: (String) -> Void) async throws {
        var pending: [UInt8] = []
        for try await chunk in output {
            chunk.withUnsafeBytes { pending.append(contentsOf: $0) }
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                each(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
            }
        }
        if !pending.isEmpty { each(String(decoding: pending, as: UTF8.self)) }
    }
}

/// A running CLI's two pipes feeding one stream of lines, which ends once both have ended (the CLI is gone): a driver
/// waiting for a line then gets nil instead of waiting forever.
private final class LinePipes: Sendable {
    private let sink: AsyncStream<AdminCLI.Line>.Continuation
    private let open = Mutex(2)

    init(_ sink: AsyncStream<AdminCLI.Line>.Continuation) { self.sink = sink }

    func yield(_ line: AdminCLI.Line) { sink.yield(line) }

    func ended() {
        let last = open.withLock { count in
            count -= 1
            return count == 0
        }
        if last { sink.finish() }
    }
}

/// A loopback HTTP server playing a script: the n-th connection gets the n-th reply (raw bytes, written a piece at a
/// time 20 ms apart, so the client reads them as separate chunks) and is then closed; a connection past the script is
/// closed unanswered. Each request's head is recorded.
final class ScriptedHTTPServer: Sendable {
    /// The replies not yet given, and the request heads received.
    final class Script: Sendable {
        private let state: Mutex<(replies: [[[UInt8]]], heads: [String])>

        init(replies: [[[UInt8]]]) { state = Mutex((replies: replies, heads: [])) }

        var heads: [String] { state.withLock { $0.heads } }

        /// Records a request's head; returns its connection's reply (nil past the script).
        func answer(head: String) -> [[UInt8]]? {
            state.withLock { state in
                state.heads.append(head)
                return state.replies.isEmpty ? nil : state.replies.removeFirst()
            }
        }
    }

    let port: Int
    private let channel: any Channel
    private let script: Script

    private init(port: Int, channel: any Channel, script: Script) {
        self.port = port
        self.channel = channel
        self.script = script
    }

    /// The request heads received, in order: request line and headers, `\r\n` between them.
    var requestHeads: [String] { script.heads }

    static func start(replies: [[[UInt8]]]) async throws -> ScriptedHTTPServer {
        let script = Script(replies: replies)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ScriptedHandler(script: script))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return ScriptedHTTPServer(port: channel.localAddress?.port ?? 0, channel: channel, script: script)
    }

    /// Stops listening.
    func close() async {
        try? await channel.close()
    }
}

/// Reads one request head, then plays the script's reply for it.
private final class ScriptedHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    let script: ScriptedHTTPServer.Script
    private var received: [UInt8] = []
    private var answered = false

    init(script: ScriptedHTTPServer.Script) { self.script = script }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        var buffer = unwrapInboundIn(data)
        received += buffer.readBytes(length: buffer.readableBytes) ?? []
        guard let end = Self.endOfHead(in: received) else { return }
        answered = true
        let channel = context.channel
        guard let pieces = script.answer(head: String(decoding: received[..<end], as: UTF8.self)), !pieces.isEmpty else {
            context.close(promise: nil)
            return
        }
        for (index, piece) in pieces.enumerated() {
            let last = index == pieces.count - 1
            context.eventLoop.scheduleTask(in: .milliseconds(Int64(index) * 20)) {
                let written = channel.writeAndFlush(ByteBuffer(bytes: piece))
                if last { written.whenComplete { _ in channel.close(promise: nil) } }
            }
        }
    }

    /// Where the blank line that ends a request head starts.
    private static func endOfHead(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        return (0...(bytes.count - 4)).first { bytes[$0] == 13 && bytes[$0 + 1] == 10 && bytes[$0 + 2] == 13 && bytes[$0 + 3] == 10 }
    }
}
