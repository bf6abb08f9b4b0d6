import CurlClient
import Foundation
import Synchronization
import Testing

/// `weatherboard-admin` works replies like posts (CONTRACT §13): `queue` lists both kinds, `show`, `dismiss`, `remove`
/// and `restore` take `reply:<id>`, `review` walks both, `watch` prints reply reports and decisions. The built binary,
/// run as a subprocess against a live test server (as `AdminCLITests`). The queue is shared with every other test, so
/// each looks only at its own posts and replies.
@Suite("weatherboard-admin CLI: replies")
struct AdminCLIReplyTests {
    /// A logged-in moderator's CLI.
    private static func moderatorCLI(_ server: TestServer) async throws -> (AdminCLI, TestAccount) {
        let cli = try AdminCLI()
        let (moderator, username, password) = try await server.registeredAccount(prefix: "mod")
        try await server.grantRole("moderator", to: moderator)
        let login = try await cli.run(["login", "--server", server.baseURL, "--username", username, "--password-stdin"], stdin: password + "\n")
        try #require(login.status == 0, "login: \(login)")
        return (cli, moderator)
    }

    private static func reply(_ server: TestServer, _ account: TestAccount, to postID: String, _ body: String) async throws -> String {
        let response = try await server.json("POST", "/v1/posts/\(postID)/replies", token: account.token, ["body": body])
        try #require(response.status == 201, "reply answered \(response.status): \(response.text)")
        return try #require(response.object["id"] as? String)
    }

    private static func report(_ server: TestServer, reply replyID: String, reason: String = "abuse", note: String? = nil) async throws -> TestAccount {
        let reporter = try await server.anonymousAccount()
        var body = ["reason": reason]
        if let note { body["note"] = note }
        let response = try await server.json("POST", "/v1/replies/\(replyID)/reports", token: reporter.token, body)
        try #require(response.status == 201, "report answered \(response.status): \(response.text)")
        return reporter
    }

    private static func report(_ server: TestServer, post postID: String, reason: String = "spam") async throws {
        let response = try await server.json("POST", "/v1/posts/\(postID)/reports", token: try await server.anonymousAccount().token, ["reason": reason])
        try #require(response.status == 201, "report answered \(response.status): \(response.text)")
    }

    /// The reply as a moderator reads it (`GET /v1/replies/{id}`, with its status).
    private static func replyStatus(_ server: TestServer, _ replyID: String, moderator: TestAccount) async throws -> String? {
        let response = try await server.json("GET", "/v1/replies/\(replyID)", token: moderator.token)
        try #require(response.status == 200, "reply answered \(response.status): \(response.text)")
        return response.object["status"] as? String
    }

    /// The outcome of the reporter's report on the reply.
    private static func outcome(_ server: TestServer, _ reporter: TestAccount, reply replyID: String) async throws -> String? {
        try await server.json("GET", "/v1/accounts/me/reports", token: reporter.token).items.first { $0["replyId"] as? String == replyID }?["outcome"] as? String
    }

    /// A queue item's target as `post:ID` or `reply:ID`.
    private static func target(_ item: [String: Any]) -> String {
        if item["target"] as? String == "reply" { return "reply:\((item["reply"] as? [String: Any])?["id"] as? String ?? "?")" }
        return "post:\((item["post"] as? [String: Any])?["id"] as? String ?? "?")"
    }

    @Test("queue lists a reported post and a reported reply oldest first, each with its kind; show reply:<id> has the reply, its post, revisions and reports")
    func queueAndShow() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let (cli, _) = try await Self.moderatorCLI(server)
            defer { cli.cleanUp() }
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author, title: "우산", body: "오늘 우산 필요할까요")["id"] as? String)
            let replyID = try await Self.reply(server, replier, to: postID, "첫 댓글")
            #expect(try await server.json("PATCH", "/v1/replies/\(replyID)", token: replier.token, ["body": "광고 댓글 spam.example"]).status == 200)
            try await Self.report(server, post: postID)
            _ = try await Self.report(server, reply: replyID, reason: "spam", note: "광고예요")
            // Edited after the report: show prints the text as reported too.
            #expect(try await server.json("PATCH", "/v1/replies/\(replyID)", token: replier.token, ["body": "그냥 댓글"]).status == 200)

            // --json: the API's items, oldest first across both kinds.
            let json = try await cli.run(["queue", "--json", "--limit", "1000"])
            #expect(json.status == 0, "queue --json: \(json)")
            let items = try #require((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["items"] as? [[String: Any]])
            let mine = items.filter { ["post:\(postID)", "reply:\(replyID)"].contains(Self.target($0)) }
            #expect(mine.map(Self.target) == ["post:\(postID)", "reply:\(replyID)"], "\(mine)")
            #expect((mine.last?["post"] as? [String: Any])?["id"] as? String == postID, "a reply's item carries its post")

            // The table: a row each, the post first, its TARGET column naming the kind; the reply's row is on its post.
            let table = try await cli.run(["queue", "--limit", "1000"])
            #expect(table.status == 0, "queue: \(table)")
            let lines = table.stdout.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("POST  ") == true && lines.first?.contains("TARGET") == true, "\(lines.first ?? "")")
            let postRow = try #require(lines.firstIndex { $0.hasPrefix("\(postID) ") && $0.contains(" post:\(postID) ") }, "\(table.stdout)")
            let replyRow = try #require(lines.firstIndex { $0.hasPrefix("\(postID) ") && $0.contains(" reply:\(replyID) ") }, "\(table.stdout)")
            #expect(postRow < replyRow, "oldest first")
            #expect(lines[postRow].contains("우산 — 오늘 우산 필요할까요"), "\(lines[postRow])")
            #expect(lines[replyRow].contains("visible") && lines[replyRow].contains("spam") && lines[replyRow].hasSuffix("-  그냥 댓글"), "\(lines[replyRow])")

            // show reply:<id>: the reply, its post for context, its revisions and its open report as reported.
            let show = try await cli.run(["show", "reply:\(replyID)"])
            #expect(show.status == 0, "show: \(show)")
            let shown = show.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(shown.first == "reply \(replyID)  [visible]  on post \(postID)", "\(show.stdout)")
            #expect(shown.contains { $0.hasPrefix("author ") && $0.contains("(account \(replier.id))") && $0.contains("edited ") }, "\(show.stdout)")
            #expect(shown.contains("  그냥 댓글"))
            let context = shown.filter { $0.hasPrefix("post ") }
            #expect(context.count == 1, "one line starts `post `, as for a post's item: \(show.stdout)")
            let postLine = try #require(context.first)
            #expect(postLine.hasPrefix("post \(postID)  [visible]  by ") && postLine.hasSuffix("(account \(author.id))  우산 — 오늘 우산 필요할까요"), "\(postLine)")
            #expect(shown.contains("revisions (2, oldest first):"), "\(show.stdout)")
            #expect(shown.contains("     첫 댓글") && shown.contains("     광고 댓글 spam.example"), "\(show.stdout)")
            #expect(shown.contains("open reports (1): spam"), "\(show.stdout)")
            #expect(shown.contains { $0.hasPrefix("  - spam  by account ") && $0.hasSuffix("“광고예요”") }, "\(show.stdout)")
            #expect(shown.contains("    as reported: 광고 댓글 spam.example"), "\(show.stdout)")

            // --json: the queue item itself.
            let showJSON = try await cli.run(["show", "reply:\(replyID)", "--json"])
            #expect(showJSON.status == 0, "show --json: \(showJSON)")
            let item = try #require(try JSONSerialization.jsonObject(with: Data(showJSON.stdout.utf8)) as? [String: Any])
            #expect(item["target"] as? String == "reply" && item["openReportCount"] as? Int == 1)
            #expect((item["reply"] as? [String: Any])?["id"] as? String == replyID && (item["post"] as? [String: Any])?["id"] as? String == postID)

            // show of the post (bare id, and post:<id>) is the post's item, with its own report only.
            for target in [postID, "post:\(postID)"] {
                let post = try await cli.run(["show", target])
                #expect(post.status == 0, "show \(target): \(post)")
                #expect(post.stdout.hasPrefix("post \(postID)  [visible]") && post.stdout.contains("open reports (1): spam"), "\(post.stdout)")
                #expect(!post.stdout.contains("광고예요"), "the reply's report is not the post's")
            }

            // A reply that does not exist: not found, one line.
            let missing = try await cli.run(["show", "reply:987654321098"])
            #expect(missing.status == 6 && missing.stderrLines.count == 1 && missing.stdout.isEmpty, "\(missing)")
        }
    }

    @Test("dismiss, remove and restore reply:<id> decide on the reply, resolve its reports and are logged; show falls back to the reply itself")
    func decisions() async throws {
        // One trusted report hides a reply: dismissing it makes it visible again.
        try await withTestServer(configure: { $0.rateLimitsEnabled = false; $0.reportTrustAgeSeconds = 0; $0.reportHideThreshold = 1 }) { server in
            let (cli, moderator) = try await Self.moderatorCLI(server)
            defer { cli.cleanUp() }
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author, body: "주말 날씨")["id"] as? String)
            let replyID = try await Self.reply(server, replier, to: postID, "욕설 댓글")

            // dismiss: the auto-hidden reply is visible again, the report dismissed.
            let first = try await Self.report(server, reply: replyID)
            #expect(try await Self.replyStatus(server, replyID, moderator: moderator) == "hidden")
            let dismiss = try await cli.run(["dismiss", "reply:\(replyID)", "--note", "괜찮음"])
            #expect(dismiss.status == 0, "dismiss: \(dismiss)")
            #expect(dismiss.stdout == "dismissed reply \(replyID) on post \(postID); resolved 1 report; reply is visible\n")
            #expect(try await Self.replyStatus(server, replyID, moderator: moderator) == "visible")
            #expect(try await Self.outcome(server, first, reply: replyID) == "dismissed")

            // remove: out of the public view, the report actioned.
            let second = try await Self.report(server, reply: replyID, reason: "hate")
            let remove = try await cli.run(["remove", "reply:\(replyID)", "--note", "혐오 표현"])
            #expect(remove.status == 0, "remove: \(remove)")
            #expect(remove.stdout == "removed reply \(replyID) on post \(postID); resolved 1 report\n")
            #expect(try await Self.replyStatus(server, replyID, moderator: moderator) == "removed")
            #expect(try await Self.outcome(server, second, reply: replyID) == "actioned")
            let publicReplies = try await server.json("GET", "/v1/posts/\(postID)/replies")
            #expect(publicReplies.status == 200 && publicReplies.items.isEmpty, "\(publicReplies.text)")

            // show, out of the queue: the reply itself (the moderator sees its status), no reports.
            let show = try await cli.run(["show", "reply:\(replyID)"])
            #expect(show.status == 0, "show: \(show)")
            #expect(show.stdout.hasPrefix("reply \(replyID)  [removed]  on post \(postID)\n"), "\(show.stdout)")
            #expect(show.stdout.contains("\npost \(postID)  [visible]  by ") && show.stdout.hasSuffix("no open reports\n"), "\(show.stdout)")
            let showJSON = try await cli.run(["show", "reply:\(replyID)", "--json"])
            let item = try #require(try JSONSerialization.jsonObject(with: Data(showJSON.stdout.utf8)) as? [String: Any], "\(showJSON)")
            #expect(item["target"] as? String == "reply" && item["openReportCount"] as? Int == 0 && item["firstReportedAt"] is NSNull)
            #expect((item["reply"] as? [String: Any])?["status"] as? String == "removed" && (item["post"] as? [String: Any])?["id"] as? String == postID)

            // restore: visible again.
            let restore = try await cli.run(["restore", "reply:\(replyID)"])
            #expect(restore.status == 0, "restore: \(restore)")
            #expect(restore.stdout == "restored reply \(replyID) on post \(postID); resolved 0 reports; reply is visible\n")
            #expect(try await Self.replyStatus(server, replyID, moderator: moderator) == "visible")
            #expect(try await server.json("GET", "/v1/posts/\(postID)/replies").items.map { $0["id"] as? String } == [replyID])

            // The log names the reply and the moderator.
            let log = try await cli.run(["log", "--json", "--limit", "100"])
            let entries = try #require((try JSONSerialization.jsonObject(with: Data(log.stdout.utf8)) as? [String: Any])?["items"] as? [[String: Any]], "\(log)")
            let mine = entries.filter { $0["targetType"] as? String == "reply" && $0["targetId"] as? String == replyID }
            #expect(mine.map { $0["action"] as? String } == ["restore", "remove", "dismiss"], "\(mine)")
            #expect(mine.allSatisfy { $0["moderatorId"] as? String == moderator.id } && mine[1]["note"] as? String == "혐오 표현")

            // A reply that does not exist: not found, one line, nothing on standard output.
            let missing = try await cli.run(["remove", "reply:987654321098"])
            #expect(missing.status == 6 && missing.stderrLines.count == 1 && missing.stdout.isEmpty, "\(missing)")
        }
    }

    @Test("a scripted review walks posts and replies: dismisses a post, bans a reply's author and removes the reply, skipping the rest")
    func review() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let (cli, moderator) = try await Self.moderatorCLI(server)
            defer { cli.cleanUp() }
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author, body: "리뷰할 글")["id"] as? String)
            let otherPostID = try #require(try await server.createPost(author, title: "맥락", body: "댓글이 달린 글")["id"] as? String)
            let replyID = try await Self.reply(server, replier, to: otherPostID, "리뷰할 댓글")
            try await Self.report(server, post: postID)
            let reporter = try await Self.report(server, reply: replyID)

            // Each item's first line (after its `── n ──` rule) says what it is: ours are acted on, the rest skipped.
            // Input ends after our second, which quits.
            struct Driver: Sendable {
                var headerNext = false
                var ours = 0
            }
            let driver = Mutex(Driver())
            let review = try await cli.run(["review"]) { line in
                driver.withLock { state -> AdminCLI.Reply? in
                    if line.hasPrefix("── ") {
                        state.headerNext = true
                        return nil
                    }
                    guard state.headerNext else { return nil }
                    state.headerNext = false
                    let answer: String
                    if line.hasPrefix("post \(postID) ") {
                        answer = "d\n"
                    } else if line.hasPrefix("reply \(replyID) ") {
                        #expect(line == "reply \(replyID)  [visible]  on post \(otherPostID)")
                        answer = "b\nrude replies\n\nr\n"
                    } else {
                        return .respond("s\n")
                    }
                    state.ours += 1
                    return state.ours == 2 ? .respondAndClose(answer) : .respond(answer)
                }
            }
            #expect(review.status == 0, "review: \(review)")
            #expect(review.stdout.contains("dismissed post \(postID); resolved 1 report; post is visible"), "\(review.stdout)")
            #expect(review.stdout.contains("banned account \(replier.id) permanently"), "the reply's author: \(review.stdout)")
            #expect(review.stdout.contains("removed reply \(replyID) on post \(otherPostID); resolved 1 report"), "\(review.stdout)")
            let summary = try #require(review.stdout.split(separator: "\n").last)
            #expect(summary.hasPrefix("reviewed ") && summary.contains(" and ") && summary.contains("dismissed 1, removed 1, banned 1"), "\(summary)")

            #expect(try await Self.replyStatus(server, replyID, moderator: moderator) == "removed")
            #expect(try await Self.outcome(server, reporter, reply: replyID) == "actioned")
            #expect(try await server.json("GET", "/v1/accounts/me", token: replier.token).object["banned"] as? Bool == true)
            #expect(try await server.json("GET", "/v1/accounts/me", token: author.token).object["banned"] as? Bool == false)
        }
    }

    @Test("watch prints a reply's report and its resolution: a line for people naming the reply and its post, and JSON lines with replyId")
    func watch() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let (cli, moderator) = try await Self.moderatorCLI(server)
            defer { cli.cleanUp() }
            let author = try await server.anonymousAccount()
            let replier = try await server.anonymousAccount()
            let postID = try #require(try await server.createPost(author, body: "지켜보는 글")["id"] as? String)
            let replyIDs = [
                try await Self.reply(server, replier, to: postID, "실시간 댓글\n둘째 줄"), try await Self.reply(server, replier, to: postID, "또 다른 댓글"),
            ]

            for (json, replyID) in zip([false, true], replyIDs) {
                let watch = try await cli.runLive(json ? ["watch", "--json"] : ["watch"]) { live in
                    let watching = await live.next { !$0.isOutput && $0.text.hasPrefix("watching the moderation queue on ") }
                    try #require(watching != nil, "no connection: \(live.transcript)")
                    _ = try await Self.report(server, reply: replyID, reason: "spam")
                    if json {
                        let report = await live.nextEvent {
                            $0["event"] as? String == "report" && (($0["data"] as? [String: Any]).map(Self.target)) == "reply:\(replyID)"
                        }
                        let item = try #require(report?["data"] as? [String: Any], "no report event: \(live.transcript)")
                        #expect((item["post"] as? [String: Any])?["id"] as? String == postID && item["openReportCount"] as? Int == 1)
                    } else {
                        let line = await live.next { $0.isOutput && $0.text.contains("  REPORT    reply \(replyID) on post \(postID)  ") }
                        #expect(line?.text.hasSuffix("  spam  1 open report  실시간 댓글 둘째 줄") == true, "\(live.transcript)")
                    }
                    let decision = try await server.json("POST", "/v1/moderation/replies/\(replyID)/decision", token: moderator.token, ["action": "remove"])
                    try #require(decision.status == 200, "decision answered \(decision.status): \(decision.text)")
                    if json {
                        let resolved = await live.nextEvent { $0["event"] as? String == "resolved" && ($0["data"] as? [String: Any])?["replyId"] as? String == replyID }
                        let data = try #require(resolved?["data"] as? [String: Any], "no resolved event: \(live.transcript)")
                        #expect(data["postId"] as? String == postID && data["action"] as? String == "remove" && data["moderatorId"] as? String == moderator.id)
                    } else {
                        let line = await live.next { $0.isOutput && $0.text.contains("  RESOLVED  reply \(replyID) ") }
                        #expect(line?.text.hasSuffix("  RESOLVED  reply \(replyID) on post \(postID)  remove  by moderator \(moderator.id)") == true, "\(live.transcript)")
                    }
                    live.interrupt()
                }
                #expect(watch.status == 0, "watch: \(watch)")
            }
        }
    }

    @Test("a target that is neither an id, post:<id> nor reply:<id> is a usage error (64) naming it, escaped, before any call")
    func badTargets() async throws {
        // No login and no server: the target is checked first. (A NUL cannot travel in an argument vector at all.)
        let cli = try AdminCLI()
        defer { cli.cleanUp() }
        for command in ["show", "dismiss", "remove", "restore"] {
            for target in ["reply:", "reply:abc", "reply:+5", "reply:-5", "comment:3", "post:0", "007", "", "reply:1:2", "99999999999999999999", "reply:\u{1B}[31m5"] {
                let result = try await cli.run([command, target])
                #expect(result.status == 64, "\(command) \(target.debugDescription): \(result)")
                #expect(result.stderrLines.first == "Error: invalid target \(target.debugDescription): expected a post id (123 or post:123) or a reply id (reply:123)", "\(result)")
                #expect(!result.stderr.contains("\u{1B}") && result.stdout.isEmpty, "\(result)")
            }
        }
        // A well-formed target gets as far as the login check.
        for target in ["12", "post:12", "reply:12"] {
            #expect(try await cli.run(["show", target]).status == 4)
        }
    }
}
