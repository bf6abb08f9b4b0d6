import Board
import FakeAPNs
import Push
import Foundation
import Synchronization
import Testing
import WeatherboardServer

/// CONTRACT §14's notifications, end to end: queued in the cause's transaction, claimed by the worker, sent over
/// HTTP/2 through libcurl to a fake APNs that checks every JWT and header, and settled as APNs answers.
@Suite("Notifications: what is sent, and how APNs's answers are handled")
struct PushDeliveryTests {
    static func payload(_ request: FakeAPNs.Request) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(request.payload))) as? [String: Any] ?? [:]
    }

    static func wb(_ request: FakeAPNs.Request) -> [String: Any] { payload(request)["wb"] as? [String: Any] ?? [:] }

    static func alert(_ request: FakeAPNs.Request) -> [String: Any] {
        ((payload(request)["aps"] as? [String: Any])?["alert"] as? [String: Any]) ?? [:]
    }

    /// A post by `author` and a reply to it by `replier`; returns (postID, replyID).
    static func reply(_ harness: PushHarness, to author: TestAccount, from replier: TestAccount, body: String = "좋은 글이네요") async throws -> (String, String) {
        let post = try #require(try await harness.server.createPost(author, title: "비 오는 날")["id"] as? String)
        let reply = try await harness.server.json("POST", "/v1/posts/\(post)/replies", token: replier.token, ["body": body])
        try #require(reply.status == 201, "\(reply.status) \(reply.text)")
        return (post, try #require(reply.object["id"] as? String))
    }

    @Test("a reply notifies its post's author's device once: §14's headers, the replier's name, the body's first 100 code points, wb and thread-id")
    func replyNotifies() async throws {
        try await withPushServer { harness in
            let author = try await harness.server.anonymousAccount()
            let replier = try await harness.server.anonymousAccount()
            let token = try await harness.device(author)
            let body = String(repeating: "가", count: 99) + "😀😀"
            let (post, reply) = try await Self.reply(harness, to: author, from: replier, body: body)
            #expect(try await harness.deliver() == 1)
            let sent = harness.requests(to: token)
            try #require(sent.count == 1)
            let request = sent[0]
            #expect(request.answeredStatus == 200)
            #expect(request.pushType == "alert")
            #expect(request.priority == "10")
            #expect(request.topic == PushHarness.topic)
            #expect(request.collapseID == "reply-\(reply)")
            #expect(request.apnsID.flatMap(UUID.init(uuidString:)) != nil)
            #expect(Int(request.expiration ?? "") ?? 0 > Int(Date().timeIntervalSince1970))
            #expect(Self.wb(request)["kind"] as? String == "reply")
            #expect(Self.wb(request)["postId"] as? String == post)
            #expect(Self.wb(request)["replyId"] as? String == reply)
            #expect((Self.payload(request)["aps"] as? [String: Any])?["thread-id"] as? String == "post-\(post)")
            let shown = try #require(Self.alert(request)["body"] as? String)
            #expect(shown == String(repeating: "가", count: 99) + "😀…")
            #expect(try await harness.rows(for: token).map(\.result) == ["delivered"])
            // Nothing more to send: a second pass claims nothing.
            #expect(try await harness.deliver() == 0)
            #expect(harness.fake.requests.count == 1)
            // What /metrics says of it.
            await harness.delivery.recordDepth()
            let metrics = try await harness.server.request("GET", "/metrics").text
            #expect(metrics.contains(#"push_sent_total{kind="reply",result="delivered"} 1"#), "\(metrics)")
            #expect(metrics.contains("push_queue_depth 0"))
            #expect(metrics.contains("push_delivery_seconds_count 1"))
        }
    }

    @Test("no notification: one's own reply, a blocked replier, a held reply, a banned recipient, replies off, a reply removed before it went")
    func noNotification() async throws {
        try await withPushServer { harness in
            let server = harness.server
            // Added before any reply: the filter caches its terms for a few seconds.
            let term = "zzspam\(UInt32.random(in: 0...UInt32.max))"
            _ = try await server.dependencies.moderation.addTerm(term)
            let author = try await server.anonymousAccount()
            let token = try await harness.device(author)
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            // Own reply.
            _ = try await Self.reply(harness, to: author, from: author)
            // A blocked replier.
            let blocked = try await server.anonymousAccount()
            #expect(try await server.json("POST", "/v1/accounts/me/blocks", token: author.token, ["accountId": blocked.id]).status < 300)
            _ = try await Self.reply(harness, to: author, from: blocked)
            // A reply the term filter holds.
            let spammer = try await server.anonymousAccount()
            _ = try await Self.reply(harness, to: author, from: spammer, body: "buy \(term) now")
            // A reply removed before it was sent.
            let rude = try await server.anonymousAccount()
            let (_, removed) = try await Self.reply(harness, to: author, from: rude)
            #expect(try await server.json("POST", "/v1/moderation/replies/\(removed)/decision", token: moderator.token, ["action": "remove"]).status == 200)
            #expect(try await harness.deliver() == 1, "the removed reply's notification is claimed and dropped")
            #expect(harness.requests(to: token).isEmpty)
            #expect(try await harness.rows(for: token).map(\.result) == ["dropped"])

            // Replies off.
            #expect(try await server.json("PATCH", "/v1/accounts/me/notifications", token: author.token, ["replies": false]).status == 200)
            _ = try await Self.reply(harness, to: author, from: try await server.anonymousAccount())
            #expect(try await harness.deliver() == 0)
            #expect(try await server.json("PATCH", "/v1/accounts/me/notifications", token: author.token, ["replies": true]).status == 200)
            // A banned recipient: its post stays up, another account replies, nothing is sent to it.
            let bannedPost = try #require(try await server.createPost(author)["id"] as? String)
            let ban = try await server.json("POST", "/v1/moderation/accounts/\(author.id)/ban", token: moderator.token, ["until": nil as String?, "reason": "test"] as [String: Any?])
            #expect(ban.status == 200, "\(ban.text)")
            let late = try await server.anonymousAccount()
            #expect(try await server.json("POST", "/v1/posts/\(bannedPost)/replies", token: late.token, ["body": "hi"]).status == 201)
            #expect(try await harness.deliver() == 0)
            #expect(harness.requests(to: token).isEmpty)

            // The control: an ordinary reply to someone else's post does notify.
            let other = try await server.anonymousAccount()
            let otherToken = try await harness.device(other)
            _ = try await Self.reply(harness, to: other, from: try await server.anonymousAccount())
            #expect(try await harness.deliver() == 1)
            #expect(harness.requests(to: otherToken).count == 1)
        }
    }

    @Test("a token that moved to another account, a logout and an account deletion: nothing queued for the phone is sent; an upgrade keeps it")
    func devicesFollowSessions() async throws {
        try await withPushServer { harness in
            let server = harness.server
            let author = try await server.anonymousAccount()
            let token = try await harness.device(author)
            _ = try await Self.reply(harness, to: author, from: try await server.anonymousAccount())
            // The phone changes hands before the worker runs.
            let next = try await server.anonymousAccount()
            #expect(try await server.json("PUT", "/v1/accounts/me/devices/\(token)", token: next.token, ["environment": "sandbox", "timeZone": "Asia/Seoul"]).status == 201)
            #expect(try await harness.deliver() == 1)
            #expect(harness.requests(to: token).isEmpty, "the first account's news never reaches the phone")
            #expect(try await harness.rows(for: token).map(\.result) == ["dropped"])

            // Logout: the device and its queue go with the session.
            let leaver = try await server.anonymousAccount()
            let leaverToken = try await harness.device(leaver)
            _ = try await Self.reply(harness, to: leaver, from: try await server.anonymousAccount())
            #expect(try await server.json("DELETE", "/v1/sessions/current", token: leaver.token).status == 204)
            #expect(try await harness.rows(for: leaverToken).isEmpty)

            // Account deletion.
            let deleter = try await server.anonymousAccount()
            let deleterToken = try await harness.device(deleter)
            _ = try await Self.reply(harness, to: deleter, from: try await server.anonymousAccount())
            #expect(try await server.json("DELETE", "/v1/accounts/me", token: deleter.token).status == 204)
            #expect(try await harness.rows(for: deleterToken).isEmpty)

            // An upgrade carries the device to the new session.
            let upgrader = try await server.anonymousAccount()
            let upgraderToken = try await harness.device(upgrader)
            let upgraded = try await server.json(
                "POST", "/v1/accounts/me/credentials", token: upgrader.token,
                ["username": "push_\(UInt32.random(in: 0...UInt32.max))", "password": "correct horse battery staple"]
            )
            #expect(upgraded.status == 200)
            let upgradedAccount = TestAccount(id: upgrader.id, token: try #require(upgraded.object["token"] as? String))
            _ = try await Self.reply(harness, to: upgradedAccount, from: try await server.anonymousAccount())
            #expect(try await harness.deliver() == 1)
            #expect(harness.requests(to: upgraderToken).count == 1)
            #expect(harness.fake.requests.count == 1)
        }
    }

    @Test("retries: 500, a reset stream and 429 are tried again with backoff until one 200, every try with the same apns-id and collapse-id")
    func retriesEndInOneDelivery() async throws {
        try await withPushServer { harness in
            let answers: [FakeAPNs.Answer] = [.status(500, reason: "InternalServerError"), .resetStream, .status(429, reason: "TooManyRequests"), .ok]
            let count = CallCounter()
            harness.fake.script { _ in
                return answers[min(count.next(), answers.count - 1)]
            }
            let author = try await harness.server.anonymousAccount()
            let token = try await harness.device(author)
            _ = try await Self.reply(harness, to: author, from: try await harness.server.anonymousAccount())
            for _ in 0..<4 {
                try await harness.deliver()
                harness.clock.advance(seconds: 400)  // past any backoff (at most 300 s, +50 %)
            }
            let sent = harness.requests(to: token)
            #expect(sent.count == 4)
            #expect(Set(sent.compactMap(\.apnsID)).count == 1)
            #expect(Set(sent.compactMap(\.collapseID)).count == 1)
            #expect(sent.filter { $0.answeredStatus == 200 }.count == 1)
            #expect(try await harness.rows(for: token).map(\.result) == ["delivered"])
            #expect(try await harness.rows(for: token).map(\.attempts) == [4])
        }
    }

    @Test("410 later than the registration and 400 BadDeviceToken remove the device; a 410 older than it keeps it")
    func goneDevices() async throws {
        try await withPushServer { harness in
            let server = harness.server
            let later = try await server.anonymousAccount()
            let laterToken = try await harness.device(later)
            let older = try await server.anonymousAccount()
            let olderToken = try await harness.device(older)
            let bad = try await server.anonymousAccount()
            let badToken = try await harness.device(bad)
            let nowMs = Int64(Date().timeIntervalSince1970 * 1000)
            harness.fake.script { request in
                switch request.deviceToken {
                case laterToken: .status(410, reason: "Unregistered", timestamp: nowMs + 60_000)
                case olderToken: .status(410, reason: "Unregistered", timestamp: nowMs - 3_600_000)
                default: .status(400, reason: "BadDeviceToken")
                }
            }
            for account in [later, older, bad] { _ = try await Self.reply(harness, to: account, from: try await server.anonymousAccount()) }
            #expect(try await harness.deliver() == 3)
            func devices(_ account: TestAccount) async throws -> [String] {
                NotificationSettingsTests.tokens(try await server.json("GET", "/v1/accounts/me/devices", token: account.token))
            }
            #expect(try await devices(later).isEmpty)
            #expect(try await devices(bad).isEmpty)
            #expect(try await harness.rows(for: badToken).isEmpty, "what was queued for a removed device goes with it")
            #expect(try await devices(older) == [olderToken])
            #expect(try await harness.rows(for: olderToken).map(\.result) == ["unregistered"])
        }
    }

    @Test("403 InvalidProviderToken pauses the environment: nothing more is sent to it, the device is kept, the notification waits")
    func providerTokenRefused() async throws {
        try await withPushServer { harness in
            harness.fake.script { _ in .status(403, reason: "InvalidProviderToken") }
            let author = try await harness.server.anonymousAccount()
            let token = try await harness.device(author)
            _ = try await Self.reply(harness, to: author, from: try await harness.server.anonymousAccount())
            _ = try await Self.reply(harness, to: author, from: try await harness.server.anonymousAccount())
            try await harness.deliver()
            #expect(harness.delivery.isPaused(.sandbox))
            let triedWhilePaused = harness.requests(to: token).count
            #expect(triedWhilePaused >= 1)
            harness.fake.script { _ in .ok }
            try await harness.deliver()
            #expect(harness.requests(to: token).count == triedWhilePaused, "paused: no request")
            harness.clock.advance(seconds: 120)
            try await harness.deliver()
            #expect(harness.requests(to: token).filter { $0.answeredStatus == 200 }.count == 2)
            #expect(NotificationSettingsTests.tokens(try await harness.server.json("GET", "/v1/accounts/me/devices", token: author.token)) == [token])
        }
    }

    @Test("100 pushes at once go over one HTTP/2 connection with one provider token")
    func oneConnectionOneToken() async throws {
        try await withPushServer { harness in
            let author = try await harness.server.anonymousAccount()
            var tokens: [String] = []
            for _ in 0..<10 { tokens.append(try await harness.device(author)) }
            let post = try #require(try await harness.server.createPost(author)["id"] as? String)
            for _ in 0..<10 {
                let replier = try await harness.server.anonymousAccount()
                #expect(try await harness.server.json("POST", "/v1/posts/\(post)/replies", token: replier.token, ["body": "hi"]).status == 201)
            }
            #expect(try await harness.deliver() == 100)
            #expect(harness.fake.delivered.count == 100)
            #expect(harness.fake.connectionsAccepted == 1)
            #expect(harness.fake.distinctJWTs.count == 1)
            #expect(Set(harness.fake.delivered.compactMap(\.apnsID)).count == 100)
        }
    }

    @Test("quiet hours fold replies into one summary sent when they end; past 30 an hour the rest fold into one sent when the hour ends")
    func foldingIntoSummaries() async throws {
        try await withPushServer { harness in
            let server = harness.server
            // Quiet now on the device's wall clock (Asia/Seoul, not the server's UTC): from an hour ago to an hour on.
            let seoul = TimeZone(identifier: "Asia/Seoul")!
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = seoul
            func hhmm(_ date: Date) -> String {
                let c = calendar.dateComponents([.hour, .minute], from: date)
                return String(format: "%02d:%02d", c.hour!, c.minute!)
            }
            let quiet = try await server.anonymousAccount()
            let quietToken = try await harness.device(quiet)
            let patch = try await server.json(
                "PATCH", "/v1/accounts/me/notifications", token: quiet.token,
                ["quietHours": ["start": hhmm(harness.clock.now.addingTimeInterval(-3600)), "end": hhmm(harness.clock.now.addingTimeInterval(3600))]]
            )
            #expect(patch.status == 200, "\(patch.text)")
            let post = try #require(try await server.createPost(quiet)["id"] as? String)
            for _ in 0..<3 {
                #expect(try await server.json("POST", "/v1/posts/\(post)/replies", token: try await server.anonymousAccount().token, ["body": "hi"]).status == 201)
            }
            #expect(try await harness.deliver() == 3, "claimed, and folded")
            #expect(harness.requests(to: quietToken).isEmpty)
            #expect(try await harness.rows(for: quietToken).map(\.result) == ["folded", "folded", "folded", nil], "three folded into one summary, waiting")
            harness.clock.advance(seconds: 3700)
            #expect(try await harness.deliver() == 1)
            let summary = try #require(harness.requests(to: quietToken).first)
            #expect(Self.wb(summary)["kind"] as? String == "replies")
            #expect(Self.wb(summary)["postIds"] as? [String] == [post])
            #expect(Self.alert(summary)["body"] as? String == "3 new replies")

            // The hourly cap: 35 replies, 30 sent, then one summary of 5 when the hour ends.
            let busy = try await server.anonymousAccount()
            let busyToken = try await harness.device(busy)
            let busyPost = try #require(try await server.createPost(busy)["id"] as? String)
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<35 {
                    group.addTask {
                        let replier = try await server.anonymousAccount()
                        return try await server.json("POST", "/v1/posts/\(busyPost)/replies", token: replier.token, ["body": "hi"]).status
                    }
                }
                for try await status in group { #expect(status == 201) }
            }
            try await harness.deliver()
            #expect(harness.requests(to: busyToken).count == 30)
            harness.clock.advance(seconds: 3700)
            try await harness.deliver()
            let all = harness.requests(to: busyToken)
            #expect(all.count == 31)
            #expect(Self.wb(all.last!)["kind"] as? String == "replies")
            #expect(Self.alert(all.last!)["body"] as? String == "5 new replies")
        }
    }

    @Test("a report's outcome reaches its reporter (never who decided), and the author hears of the removal")
    func decisionsNotify() async throws {
        try await withPushServer { harness in
            let server = harness.server
            let author = try await server.anonymousAccount()
            let authorToken = try await harness.device(author, language: "ko")
            let reporter = try await server.anonymousAccount()
            let reporterToken = try await harness.device(reporter)
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let post = try #require(try await server.createPost(author, title: "광고 글")["id"] as? String)
            let report = try await server.json("POST", "/v1/posts/\(post)/reports", token: reporter.token, ["reason": "spam"])
            #expect(report.status == 201, "\(report.text)")
            let reportID = try #require(report.object["id"] as? String)
            #expect(try await server.json("POST", "/v1/moderation/posts/\(post)/decision", token: moderator.token, ["action": "remove"]).status == 200)
            #expect(try await harness.deliver() == 2)
            let outcome = try #require(harness.requests(to: reporterToken).first)
            #expect(Self.wb(outcome)["kind"] as? String == "reportOutcome")
            #expect(Self.wb(outcome)["reportId"] as? String == reportID)
            #expect(Self.wb(outcome)["outcome"] as? String == "removed")
            #expect(!String(decoding: outcome.payload, as: UTF8.self).contains(moderator.id))
            let moderation = try #require(harness.requests(to: authorToken).first)
            #expect(Self.wb(moderation)["kind"] as? String == "moderation")
            #expect(Self.wb(moderation)["action"] as? String == "remove")
            #expect((Self.alert(moderation)["body"] as? String)?.contains("광고 글") == true)

            // A banned author still hears of a moderator's restore (and of nothing else).
            let ban = try await server.json("POST", "/v1/moderation/accounts/\(author.id)/ban", token: moderator.token, ["until": nil as String?, "reason": "test"] as [String: Any?])
            #expect(ban.status == 200)
            #expect(try await server.json("POST", "/v1/moderation/posts/\(post)/decision", token: moderator.token, ["action": "restore"]).status == 200)
            #expect(try await harness.deliver() == 1)
            let restored = try #require(harness.requests(to: authorToken).last)
            #expect(Self.wb(restored)["action"] as? String == "restore")
        }
    }

    @Test("a reply the term filter held notifies the post's author when a moderator lets it through, once, however often it is restored")
    func heldReplyLetThrough() async throws {
        try await withPushServer { harness in
            let server = harness.server
            let term = "zzheld\(UInt32.random(in: 0...UInt32.max))"
            _ = try await server.dependencies.moderation.addTerm(term)
            let author = try await server.anonymousAccount()
            let token = try await harness.device(author)
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let (_, reply) = try await Self.reply(harness, to: author, from: try await server.anonymousAccount(), body: "about \(term)")
            #expect(try await harness.deliver() == 0, "held: nothing queued")
            #expect(try await server.json("POST", "/v1/moderation/replies/\(reply)/decision", token: moderator.token, ["action": "dismiss"]).status == 200)
            #expect(try await harness.deliver() == 1)
            #expect(harness.requests(to: token).map { Self.wb($0)["replyId"] as? String } == [reply])
            // Removed, then restored: the phone already had it.
            for action in ["remove", "restore"] {
                #expect(try await server.json("POST", "/v1/moderation/replies/\(reply)/decision", token: moderator.token, ["action": action]).status == 200)
            }
            try await harness.deliver()
            #expect(harness.requests(to: token).filter { Self.wb($0)["kind"] as? String == "reply" }.count == 1)
        }
    }

    @Test("the briefing fires at the device's wall-clock minute in its own zone, across a spring-forward night, once a local day")
    func briefingAcrossDST() async throws {
        try await withPushServer { harness in
            let server = harness.server
            let account = try await server.anonymousAccount()
            // 2027-03-14 is New York's spring-forward night: 02:30 does not exist; it fires at 03:00 EDT (07:00 UTC).
            harness.clock.pin(Date(timeIntervalSince1970: 1_805_004_000))  // 2027-03-14 06:00 UTC = 01:00 EST
            let token = try await harness.device(account, timeZone: "America/New_York")
            let patch = try await server.json(
                "PATCH", "/v1/accounts/me/notifications", token: account.token,
                ["briefing": ["enabled": true, "regionId": "1835848", "time": "02:30", "days": ["sun"]]]
            )
            #expect(patch.status == 200, "\(patch.text)")
            #expect(await harness.briefings() == 0)
            harness.clock.advance(seconds: 3540)  // 06:59 UTC: still before
            #expect(await harness.briefings() == 0)
            harness.clock.advance(seconds: 60)  // 07:00 UTC = 03:00 EDT
            #expect(await harness.briefings() == 1)
            #expect(await harness.briefings() == 0, "once a local day")
            #expect(try await harness.deliver() == 1)
            let briefing = try #require(harness.requests(to: token).first)
            #expect(briefing.priority == "5")
            #expect(Self.wb(briefing)["kind"] as? String == "briefing")
            #expect(Self.wb(briefing)["regionId"] as? String == "1835848")
            #expect(Self.wb(briefing)["currentWeather"] is NSNull, "no provider in this test: the briefing still goes")
            #expect(Self.wb(briefing)["posts"] is [Any])
            // The next Sunday, not sooner.
            harness.clock.advance(seconds: 6 * 86_400)
            #expect(await harness.briefings() == 0)
            harness.clock.advance(seconds: 86_400 - 3600)  // 2027-03-21 06:00 UTC = 02:00 EDT
            #expect(await harness.briefings() == 0)
            harness.clock.advance(seconds: 1800)  // 02:30 EDT
            #expect(await harness.briefings() == 1)
        }
    }

    @Test("two workers on one queue: 200 notifications, each answered 200 exactly once")
    func twoWorkersOneQueue() async throws {
        try await withPushServer { harness in
            let author = try await harness.server.anonymousAccount()
            var tokens: [String] = []
            for _ in 0..<10 { tokens.append(try await harness.device(author)) }
            let post = try #require(try await harness.server.createPost(author)["id"] as? String)
            for _ in 0..<20 {
                let replier = try await harness.server.anonymousAccount()
                #expect(try await harness.server.json("POST", "/v1/posts/\(post)/replies", token: replier.token, ["body": "hi"]).status == 201)
            }
            var options = PushDelivery.Options()
            options.batchSize = 7
            // Another instance: a worker with its own APNs client (its own connection and provider token).
            let otherClient = try APNsClient(configuration: harness.client.configuration)
            defer { Task { await otherClient.shutdown() } }
            let other = PushDelivery(queue: harness.queue, database: harness.database, sender: otherClient, options: options, logger: testLogger)
            let mine = PushDelivery(queue: harness.queue, database: harness.database, sender: harness.client, options: options, logger: testLogger)
            async let a: Int = { var n = 0; while true { let c = try await other.round(); n += c; if c == 0 { return n } } }()
            async let b: Int = { var n = 0; while true { let c = try await mine.round(); n += c; if c == 0 { return n } } }()
            let (ca, cb) = try await (a, b)
            // The cap folds past 30 an hour: 30 replies' worth (= 20 replies × 10 devices, under the cap) all immediate.
            #expect(ca + cb == 200)
            let delivered = harness.fake.delivered.compactMap(\.apnsID)
            #expect(delivered.count == 200)
            #expect(Set(delivered).count == 200, "none sent twice")
            #expect(ca > 0 && cb > 0, "both instances worked the queue")
            #expect(harness.fake.connectionsAccepted == 2)
        }
    }
}

/// A counter a fake's script can count its calls with.
final class CallCounter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { v in defer { v += 1 }; return v } }
}
