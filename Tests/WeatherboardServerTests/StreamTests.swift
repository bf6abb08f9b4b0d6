import Board
import CurlClient
import Database
import Foundation
import Testing

/// The live board (CONTRACT §11, issue #22) over real connections and the real PostgreSQL: what each reader's stream
/// shows as posts are created, edited, hidden, removed, restored, deleted and blocked; the moderation stream; resuming
/// with `Last-Event-ID` (none missed, none twice, even when transactions commit out of order); two instances; a lost
/// listener session; slow readers; the limits; `reset`; and SIGTERM with a thousand streams open.
///
/// Every board stream filters on a region no other test posts in, so a test sees only its own posts. The suite runs
/// its tests one at a time: `stream_events` and its trim mark are one for the whole database (the reset test raises the
/// mark, which would reset another test's resume), and the listener test ends every server's listening session.
@Suite("Live board streams", .serialized)
struct StreamTests {
    // MARK: Helpers

    /// A region no other test posts in.
    static func region(_ server: TestServer) async throws -> String {
        let rows = try await server.dependencies.database.query(
            "SELECT id FROM regions WHERE id <> 1835848 ORDER BY md5(id::text || \(UUID().uuidString)) LIMIT 1"
        )
        return String(try rows[0].decode(Int.self, "id"))
    }

    static func post(
        _ server: TestServer, _ account: TestAccount, region: String, weatherType: String = "rain", category: String = "food", body: String = "스트림 테스트 글"
    ) async throws -> String {
        try #require(try await server.createPost(account, weatherType: weatherType, category: category, body: body, regionId: region)["id"] as? String)
    }

    /// The stream's first message: `retry: 2000` and, for a live start, the position as its id.
    @discardableResult
    static func opening(_ client: StreamClient, live: Bool = true, sourceLocation: SourceLocation = #_sourceLocation) async throws -> StreamClient.Message {
        let first = try await client.next()
        #expect(first.retry == 2000, "first message \(first)", sourceLocation: sourceLocation)
        #expect(first.event == nil && first.data == nil, "first message \(first)", sourceLocation: sourceLocation)
        if live { #expect(first.id != nil, "a live stream's first message carries its position: \(first)", sourceLocation: sourceLocation) }
        return first
    }

    /// Expects the next event to be `event` about `postID`.
    @discardableResult
    static func expectEvent(
        _ client: StreamClient, _ event: String, _ postID: String, _ what: String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> StreamClient.Message {
        let message = try await client.nextEvent()
        #expect(message.event == event && message.postID == postID, "\(what): expected \(event) for post \(postID), got \(message)", sourceLocation: sourceLocation)
        #expect(message.id != nil, "\(what): an event without an id: \(message)", sourceLocation: sourceLocation)
        return message
    }

    /// One value of `/metrics` (the first line that starts with `series` and a space).
    static func metric(_ server: TestServer, _ series: String) async throws -> Double? {
        let text = try await server.request("GET", "/metrics").text
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// Polls `/metrics` until `series` reaches `atLeast` (the metrics announce nothing); nil past the deadline.
    static func metric(_ server: TestServer, _ series: String, reaches atLeast: Double, deadline: Duration = .seconds(20)) async throws -> Double? {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        while clock.now < end {
            if let value = try await metric(server, series), value >= atLeast { return value }
            try await Task.sleep(for: .milliseconds(50))  // the poll's interval, not a synchronization
        }
        return nil
    }

    /// Two JSON objects are the same (compared as canonical text: sorted keys).
    static func sameJSON(_ a: [String: Any], _ b: [String: Any]) -> Bool {
        guard !a.isEmpty, let x = try? JSONSerialization.data(withJSONObject: a, options: [.sortedKeys]),
            let y = try? JSONSerialization.data(withJSONObject: b, options: [.sortedKeys])
        else { return false }
        return x == y
    }

    static func position(_ id: String?) -> StreamPosition? {
        id.flatMap { StreamPosition(Substring($0)) }
    }

    /// A pool of the test's own with no statement limit (bulk inserts, terminating the listeners).
    static func adminPool() -> PostgresPool {
        PostgresPool(configuration: PostgresConfiguration(conninfo: TestDatabase.url, poolSize: 1, statementTimeoutMilliseconds: 0))
    }

    // MARK: What a reader sees

    @Test("an anonymous reader gets `post` for a new post (the object GET gives); the stream opens with retry and an id; headers")
    func newPost() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let reader = try await server.stream("/v1/stream?regionId=\(region)")
            let mine = try await server.stream("/v1/stream?regionId=\(region)", token: author.token)
            defer {
                reader.close()
                mine.close()
            }
            #expect(reader.status == 200)
            #expect(reader.header("content-type") == "text/event-stream; charset=utf-8")
            #expect(reader.header("cache-control") == "no-cache")
            #expect(reader.header("x-accel-buffering") == "no")
            let first = try await Self.opening(reader)
            try await Self.opening(mine)

            let postID = try await Self.post(server, author, region: region, body: "새 글이 실시간으로")
            let event = try await Self.expectEvent(reader, "post", postID)
            #expect(event.json["isMine"] as? Bool == false)
            #expect(event.json["body"] as? String == "새 글이 실시간으로")
            #expect(event.json["status"] == nil, "a stranger is not shown the status")
            // Positions only grow.
            if let opened = Self.position(first.id), let at = Self.position(event.id) { #expect(opened < at) } else { Issue.record("ids \(first) \(event)") }
            // The same object `GET /v1/posts/{id}` gives this reader.
            let read = try await server.json("GET", "/v1/posts/\(postID)")
            #expect(Self.sameJSON(event.json, read.object), "stream \(event.data ?? "") vs GET \(read.text)")

            let own = try await Self.expectEvent(mine, "post", postID)
            #expect(own.json["isMine"] as? Bool == true)
            #expect(own.id == event.id, "one position for one event, whoever reads it")
            let readByAuthor = try await server.json("GET", "/v1/posts/\(postID)", token: author.token)
            #expect(Self.sameJSON(own.json, readByAuthor.object), "stream \(own.data ?? "") vs GET \(readByAuthor.text)")
        }
    }

    @Test("a post created through one instance reaches a subscriber of another; a client resumes on the other instance")
    func twoInstances() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { a in
            try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { b in
                let region = try await Self.region(a)
                let author = try await a.anonymousAccount()
                let onB = try await b.stream("/v1/stream?regionId=\(region)")
                let onA = try await a.stream("/v1/stream?regionId=\(region)")
                defer {
                    onB.close()
                    onA.close()
                }
                try await Self.opening(onB)
                try await Self.opening(onA)
                let first = try await Self.post(a, author, region: region)
                try await Self.expectEvent(onB, "post", first, "created through A, read on B")
                let seenOnA = try await Self.expectEvent(onA, "post", first)
                onA.close()

                // The client that read on A comes back to B with A's id: exactly what it missed, then live.
                let second = try await Self.post(b, author, region: region)
                let third = try await Self.post(a, author, region: region)
                let seenID = try #require(seenOnA.id)
                let resumed = try await b.stream("/v1/stream?regionId=\(region)", lastEventID: seenID)
                defer { resumed.close() }
                try await Self.opening(resumed, live: false)
                try await Self.expectEvent(resumed, "post", second, "missed")
                try await Self.expectEvent(resumed, "post", third, "missed")
                let fourth = try await Self.post(a, author, region: region)
                try await Self.expectEvent(resumed, "post", fourth, "live")
                for id in [second, third, fourth] { try await Self.expectEvent(onB, "post", id) }
            }
        }
    }

    @Test("an edit is `update` with the new body for every reader")
    func edit() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let stranger = try await server.stream("/v1/stream?regionId=\(region)")
            let own = try await server.stream("/v1/stream?regionId=\(region)", token: author.token)
            defer {
                stranger.close()
                own.close()
            }
            try await Self.opening(stranger)
            try await Self.opening(own)
            let postID = try await Self.post(server, author, region: region, body: "처음 글")
            try await Self.expectEvent(stranger, "post", postID)
            try await Self.expectEvent(own, "post", postID)
            let edited = try await server.json("PATCH", "/v1/posts/\(postID)", token: author.token, ["body": "고친 글"])
            #expect(edited.status == 200)
            let update = try await Self.expectEvent(stranger, "update", postID, "stranger")
            #expect(update.json["body"] as? String == "고친 글")
            #expect(update.json["edited"] as? Bool == true)
            let ownUpdate = try await Self.expectEvent(own, "update", postID, "author")
            #expect(ownUpdate.json["body"] as? String == "고친 글")
            #expect(ownUpdate.json["isMine"] as? Bool == true)
        }
    }

    @Test("hidden by reports: `remove` for a stranger, `update` with status hidden for the author and a moderator")
    func hiddenByReports() async throws {
        try await withTestServer(configure: {
            $0.rateLimitsEnabled = false
            $0.reportHideThreshold = 1
            $0.reportTrustAgeSeconds = 0
        }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let stranger = try await server.stream("/v1/stream?regionId=\(region)")
            let own = try await server.stream("/v1/stream?regionId=\(region)", token: author.token)
            let moderating = try await server.stream("/v1/stream?regionId=\(region)", token: moderator.token)
            defer { [stranger, own, moderating].forEach { $0.close() } }
            for client in [stranger, own, moderating] { try await Self.opening(client) }
            let postID = try await Self.post(server, author, region: region)
            for client in [stranger, own, moderating] { try await Self.expectEvent(client, "post", postID) }

            let reporter = try await server.anonymousAccount()
            #expect(try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporter.token, ["reason": "spam"]).status == 201)
            let removed = try await Self.expectEvent(stranger, "remove", postID, "stranger")
            #expect(removed.json.count == 1, "remove carries only the id: \(removed)")
            let hidden = try await Self.expectEvent(own, "update", postID, "author")
            #expect(hidden.json["status"] as? String == "hidden")
            #expect(hidden.json["isMine"] as? Bool == true)
            let seenByModerator = try await Self.expectEvent(moderating, "update", postID, "moderator")
            #expect(seenByModerator.json["status"] as? String == "hidden")

            // A moderator restores it (dismiss): it comes back for the stranger.
            #expect(try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "dismiss"]).status == 200)
            try await Self.expectEvent(stranger, "post", postID, "dismissed: back")
            let back = try await Self.expectEvent(own, "update", postID, "author after dismiss")
            #expect(back.json["status"] as? String == "visible")
        }
    }

    @Test("moderator `remove` → `remove`; `restore` → `post` again; the author's DELETE → `remove`; nothing while not shown")
    func moderationAndDeletion() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let other = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let stranger = try await server.stream("/v1/stream?regionId=\(region)")
            let own = try await server.stream("/v1/stream?regionId=\(region)", token: author.token)
            defer {
                stranger.close()
                own.close()
            }
            try await Self.opening(stranger)
            try await Self.opening(own)
            let postID = try await Self.post(server, author, region: region)
            try await Self.expectEvent(stranger, "post", postID)
            try await Self.expectEvent(own, "post", postID)

            let decide = { (action: String) in
                try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": action]).status
            }
            #expect(try await decide("remove") == 200)
            try await Self.expectEvent(stranger, "remove", postID, "removed")
            let removed = try await Self.expectEvent(own, "update", postID, "author sees the removal")
            #expect(removed.json["status"] as? String == "removed")
            // An edit of a removed post is nothing to a stranger: the next thing it sees is a later post.
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: author.token, ["body": "지워진 글 고침"]).status == 200)
            let sentinel = try await Self.post(server, other, region: region)
            try await Self.expectEvent(stranger, "post", sentinel, "nothing of the removed post before this")
            try await Self.expectEvent(own, "update", postID, "author's own edit")
            try await Self.expectEvent(own, "post", sentinel)

            #expect(try await decide("restore") == 200)
            let restored = try await Self.expectEvent(stranger, "post", postID, "restored")
            #expect(restored.json["body"] as? String == "지워진 글 고침")
            try await Self.expectEvent(own, "update", postID, "author sees the restore")

            #expect(try await server.json("DELETE", "/v1/posts/\(postID)", token: author.token).status == 204)
            try await Self.expectEvent(stranger, "remove", postID, "deleted")
            try await Self.expectEvent(own, "remove", postID, "deleted, for its author too")
        }
    }

    @Test("a block: `remove` of the blocked author's posts in the blocker's streams and none of their later posts; others still see them")
    func block() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let blocked = try await server.anonymousAccount()
            let blocker = try await server.anonymousAccount()
            let other = try await server.anonymousAccount()
            let blockerStream = try await server.stream("/v1/stream?regionId=\(region)", token: blocker.token)
            let reader = try await server.stream("/v1/stream?regionId=\(region)")
            defer {
                blockerStream.close()
                reader.close()
            }
            try await Self.opening(blockerStream)
            try await Self.opening(reader)
            let before = try await Self.post(server, blocked, region: region)
            try await Self.expectEvent(blockerStream, "post", before)
            try await Self.expectEvent(reader, "post", before)

            let blocking = try await server.json("POST", "/v1/accounts/me/blocks", token: blocker.token, ["accountId": blocked.id])
            #expect(blocking.status == 204, "block answered \(blocking.status): \(blocking.text)")
            try await Self.expectEvent(blockerStream, "remove", before, "blocked author's visible post")

            let after = try await Self.post(server, blocked, region: region)
            #expect(try await server.json("PATCH", "/v1/posts/\(before)", token: blocked.token, ["body": "차단된 뒤 고침"]).status == 200)
            let sentinel = try await Self.post(server, other, region: region)
            try await Self.expectEvent(blockerStream, "post", sentinel, "nothing of the blocked author before this")
            try await Self.expectEvent(reader, "post", after, "another reader still sees the blocked author")
            try await Self.expectEvent(reader, "update", before)
            try await Self.expectEvent(reader, "post", sentinel)

            // A stream the blocker opens later knows the block too.
            let later = try await server.stream("/v1/stream?regionId=\(region)", token: blocker.token)
            defer { later.close() }
            try await Self.opening(later)
            _ = try await Self.post(server, blocked, region: region)
            let sentinel2 = try await Self.post(server, other, region: region)
            try await Self.expectEvent(later, "post", sentinel2, "a new stream of the blocker")
            try await Self.expectEvent(blockerStream, "post", sentinel2)
        }
    }

    @Test("an edit that moves a post out of a filtered stream is `remove`, into it `post`")
    func editAcrossFilters() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let snow = try await server.stream("/v1/stream?weatherType=snow&category=food&regionId=\(region)")
            defer { snow.close() }
            try await Self.opening(snow)
            let postID = try await Self.post(server, author, region: region, weatherType: "rain")
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: author.token, ["weatherType": "snow"]).status == 200)
            let entered = try await Self.expectEvent(snow, "post", postID, "edited into the filter")
            #expect(entered.json["weatherType"] as? String == "snow")
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: author.token, ["body": "눈 오는 날"]).status == 200)
            try await Self.expectEvent(snow, "update", postID, "edited inside the filter")
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: author.token, ["category": "music"]).status == 200)
            try await Self.expectEvent(snow, "remove", postID, "edited out of the filter (category)")
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: author.token, ["category": "food"]).status == 200)
            try await Self.expectEvent(snow, "post", postID, "back in")
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: author.token, ["weatherType": "rain"]).status == 200)
            try await Self.expectEvent(snow, "remove", postID, "edited out of the filter (weather type)")
        }
    }

    @Test("filters: a snow stream gets no rain post; bad filter values answer what GET /v1/posts answers")
    func filters() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let snow = try await server.stream("/v1/stream?weatherType=snow&regionId=\(region)")
            let music = try await server.stream("/v1/stream?category=music&regionId=\(region)")
            defer {
                snow.close()
                music.close()
            }
            try await Self.opening(snow)
            try await Self.opening(music)
            _ = try await Self.post(server, author, region: region, weatherType: "rain", category: "food")
            _ = try await Self.post(server, author, region: try await Self.region(server), weatherType: "snow", category: "music")
            let snowy = try await Self.post(server, author, region: region, weatherType: "snow", category: "food")
            let tune = try await Self.post(server, author, region: region, weatherType: "rain", category: "music")
            try await Self.expectEvent(snow, "post", snowy, "the first post a snow stream of this region sees")
            try await Self.expectEvent(music, "post", tune, "the first post a music stream of this region sees")

            for query in [
                "weatherType=hail", "weatherType=unknown", "weatherType=", "category=dance", "regionId=abc", "regionId=05", "regionId=-1",
                "regionId=%2B5", "weatherType=Rain",
            ] {
                let list = try await server.json("GET", "/v1/posts?\(query)")
                let stream = try await server.stream("/v1/stream?\(query)")
                defer { stream.close() }
                #expect(list.status == 400, "list \(query): \(list.status)")
                #expect(stream.status == list.status, "\(query): stream \(stream.status), list \(list.status)")
                #expect(stream.errorCode == list.errorCode, "\(query): stream \(stream.errorCode ?? "none"), list \(list.errorCode ?? "none")")
                #expect(stream.header("content-type")?.hasPrefix("application/json") == true, "\(query)")
            }
        }
    }

    // MARK: The moderation stream

    @Test("moderation stream: 401 without or with a bad token, 403 for a member; `report` then `resolved` for a moderator")
    func moderationStream() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let anonymous = try await server.stream("/v1/moderation/stream")
            #expect(anonymous.status == 401)
            #expect(anonymous.errorCode == "unauthenticated")
            anonymous.close()
            let forged = try await server.stream("/v1/moderation/stream", token: "not-a-token")
            #expect(forged.status == 401)
            forged.close()
            let member = try await server.anonymousAccount()
            let denied = try await server.stream("/v1/moderation/stream", token: member.token)
            #expect(denied.status == 403)
            #expect(denied.errorCode == "forbidden")
            denied.close()

            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let queue = try await server.stream("/v1/moderation/stream", token: moderator.token)
            defer { queue.close() }
            #expect(queue.status == 200)
            try await Self.opening(queue)
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let postID = try await Self.post(server, author, region: region, body: "신고될 글")

            let first = try await server.anonymousAccount()
            #expect(try await server.json("POST", "/v1/posts/\(postID)/reports", token: first.token, ["reason": "spam", "note": "광고"]).status == 201)
            let report = try await queue.nextEvent(about: [postID])
            #expect(report.event == "report", "\(report)")
            #expect(report.id != nil)
            #expect((report.json["post"] as? [String: Any])?["id"] as? String == postID)
            #expect((report.json["post"] as? [String: Any])?["body"] as? String == "신고될 글")
            #expect(report.json["openReportCount"] as? Int == 1)
            #expect((report.json["reports"] as? [[String: Any]])?.first?["reporterId"] as? String == first.id)
            let second = try await server.anonymousAccount()
            #expect(try await server.json("POST", "/v1/posts/\(postID)/reports", token: second.token, ["reason": "abuse"]).status == 201)
            let again = try await queue.nextEvent(about: [postID])
            #expect(again.event == "report")
            #expect(again.json["openReportCount"] as? Int == 2)

            #expect(try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "dismiss"]).status == 200)
            let resolved = try await queue.nextEvent(about: [postID])
            #expect(resolved.event == "resolved", "\(resolved)")
            #expect(resolved.json["postId"] as? String == postID)
            #expect(resolved.json["action"] as? String == "dismiss")
            #expect(resolved.json["moderatorId"] as? String == moderator.id)

            #expect(try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "remove"]).status == 200)
            let removed = try await queue.nextEvent(about: [postID])
            #expect(removed.event == "resolved")
            #expect(removed.json["action"] as? String == "remove")
            // Positions only grow.
            let ids = [report, again, resolved, removed].compactMap { Self.position($0.id) }
            #expect(ids.count == 4 && ids == ids.sorted() && Set(ids).count == 4, "\(ids)")
        }
    }

    // MARK: Resuming

    @Test("resume with Last-Event-ID: exactly the missed events in order, then live; none twice")
    func resume() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let path = "/v1/stream?regionId=\(region)"
            let client = try await server.stream(path)
            let opening = try await Self.opening(client)
            var seen: [StreamClient.Message] = []
            var created: [String] = []
            for _ in 0..<2 {
                let id = try await Self.post(server, author, region: region)
                created.append(id)
                seen.append(try await Self.expectEvent(client, "post", id))
            }
            client.close()
            #expect(client.lastEventID == seen.last?.id)

            for _ in 0..<3 { created.append(try await Self.post(server, author, region: region)) }
            let lastID = try #require(client.lastEventID)
            let resumed = try await server.stream(path, lastEventID: lastID)
            defer { resumed.close() }
            try await Self.opening(resumed, live: false)
            for id in created[2...] { seen.append(try await Self.expectEvent(resumed, "post", id, "missed")) }
            let live = try await Self.post(server, author, region: region)
            created.append(live)
            seen.append(try await Self.expectEvent(resumed, "post", live, "live"))

            let positions = seen.compactMap { Self.position($0.id) }
            #expect(positions.count == 6 && Set(positions).count == 6, "none twice: \(seen.map { $0.id ?? "-" })")
            #expect(positions == positions.sorted(), "in order: \(positions)")
            #expect(seen.map(\.postID) == created.map(Optional.some))

            // From the very first position (a horizon, not an event): everything since.
            let openingID = try #require(opening.id)
            let fromStart = try await server.stream(path, lastEventID: openingID)
            defer { fromStart.close() }
            try await Self.opening(fromStart, live: false)
            for id in created { try await Self.expectEvent(fromStart, "post", id, "from the start") }
            let sentinel = try await Self.post(server, author, region: region)
            try await Self.expectEvent(fromStart, "post", sentinel, "nothing twice before the next live post")
            try await Self.expectEvent(resumed, "post", sentinel)
        }
    }

    @Test("transactions that commit out of order: events come in commit order, the open one holds nothing back; resumes miss nothing and repeat nothing")
    func outOfOrderCommits() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let path = "/v1/stream?regionId=\(region)"
            let slowAuthor = try await server.anonymousAccount()
            let fastAuthor = try await server.anonymousAccount()
            let client = try await server.stream(path)
            defer { client.close() }
            let opening = try await Self.opening(client)
            let openingID = try #require(opening.id)

            // The gated transaction starts first and stays open; the API's post starts later and commits first.
            let gated = try await GatedTransaction.start(
                ["INSERT INTO posts (author_id, region_id, weather_type, category, body) VALUES (\(Int(slowAuthor.id)!), \(Int(region)!), 'rain', 'food', '먼저 시작한 글')"],
                on: server.dependencies.database
            )
            let fast: String
            let fastEvent: StreamClient.Message
            let during: StreamClient
            do {
                fast = try await Self.post(server, fastAuthor, region: region, body: "먼저 끝난 글")
                // Delivered while the other transaction is still open: a long transaction holds no stream back.
                fastEvent = try await Self.expectEvent(client, "post", fast, "committed while another transaction is open")
                // A stream opened while the transaction is still open.
                during = try await server.stream(path)
                try await Self.opening(during)
            } catch {
                try await gated.open()
                throw error
            }
            defer { during.close() }
            let fastID = try #require(fastEvent.id)
            #expect(client.lastEventID == fastID)
            try await gated.open()
            let slow = String(try await server.dependencies.database.query("SELECT id FROM posts WHERE author_id = \(Int(slowAuthor.id)!)")[0].decode(Int.self, "id"))

            let late = try await Self.expectEvent(client, "post", slow, "connected before: the transaction that committed last")
            if let a = Self.position(fastID), let b = Self.position(late.id) { #expect(a < b, "ids in commit order: \(fastID), \(late.id ?? "-")") }
            try await Self.expectEvent(during, "post", slow, "connected during")

            // A client that had the first commit's id (and so nothing of the open transaction) gets the later one;
            // one from before both gets both, in commit order.
            let afterFast = try await server.stream(path, lastEventID: fastID)
            defer { afterFast.close() }
            try await Self.opening(afterFast, live: false)
            try await Self.expectEvent(afterFast, "post", slow, "resumed after the first commit")
            let fromBefore = try await server.stream(path, lastEventID: openingID)
            defer { fromBefore.close() }
            try await Self.opening(fromBefore, live: false)
            try await Self.expectEvent(fromBefore, "post", fast, "resumed from before both")
            try await Self.expectEvent(fromBefore, "post", slow, "resumed from before both")
            let sentinel = try await Self.post(server, fastAuthor, region: region)
            for reader in [client, during, afterFast, fromBefore] { try await Self.expectEvent(reader, "post", sentinel, "none twice") }
        }
    }

    @Test("a reconnect past the trimmed backlog, or with a garbage id, starts with `reset`, then goes on live")
    func reset() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let path = "/v1/stream?regionId=\(region)"
            let client = try await server.stream(path)
            let opening = try await Self.opening(client)
            let postID = try await Self.post(server, author, region: region)
            let event = try await Self.expectEvent(client, "post", postID)
            client.close()

            // The post's event ages past the backlog (only this test's row is made old: the purger of every other
            // server keeps the rest), then a purger pass trims it.
            try await server.dependencies.database.execute(
                "UPDATE stream_events SET created_at = now() - interval '2 hours' WHERE kind = 'post' AND post_id = \(Int(postID)!)"
            )
            var policy = Purger.Policy()
            policy.lockKey = Int64.random(in: 1...Int64.max)
            policy.streamBacklogSeconds = 3600
            let pass = try await Purger(database: server.dependencies.database, policy: policy).runOnce()
            #expect(pass.ran)
            #expect((pass.counts["stream_events"] ?? 0) >= 1, "\(pass.counts)")

            for (name, lastID) in [
                ("from before the trimmed event", try #require(opening.id)), ("garbage", "abc"), ("the old id format", "99999999999-1"),
                ("beyond the last event", "99999999999"), ("negative", "-1"), ("leading zeros", "0\(try #require(event.id))"),
            ] {
                let resumed = try await server.stream(path, lastEventID: lastID)
                defer { resumed.close() }
                #expect(resumed.status == 200, "\(name)")
                try await Self.opening(resumed, live: false)
                let reset = try await resumed.nextEvent()
                #expect(reset.event == "reset", "\(name) (\(lastID)): \(reset)")
                #expect(reset.id != nil && reset.json.isEmpty && reset.data == "{}", "\(name): \(reset)")
                let live = try await Self.post(server, author, region: region)
                try await Self.expectEvent(resumed, "post", live, "\(name): live after the reset")
            }
        }
    }

    // MARK: Failures

    @Test("the listener's session killed: events still arrive; the reconnect is counted")
    func listenerKilled() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let client = try await server.stream("/v1/stream?regionId=\(region)")
            defer { client.close() }
            try await Self.opening(client)
            let before = try await Self.post(server, author, region: region)
            try await Self.expectEvent(client, "post", before, "before the kill")

            let admin = Self.adminPool()
            defer { admin.shutdown() }
            let killed = try await admin.count(
                "SELECT count(*) AS n FROM (SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'weatherboard-listener') t WHERE ended"
            )
            #expect(killed >= 1)
            let during = try await Self.post(server, author, region: region)
            try await Self.expectEvent(client, "post", during, "created while the listener reconnects")
            let reconnects = try await Self.metric(server, "stream_listener_reconnects_total", reaches: 1)
            #expect(reconnects != nil, "stream_listener_reconnects_total never reached 1")
            let after = try await Self.post(server, author, region: region)
            try await Self.expectEvent(client, "post", after, "after the reconnect")
        }
    }

    @Test("a reader that does not read is disconnected once its buffer is full, counted, and resumes with its last id")
    func slowReader() async throws {
        try await withTestServer(configure: {
            $0.rateLimitsEnabled = false
            $0.streamBufferEvents = 4
        }) { server in
            let region = try await Self.region(server)
            let elsewhere = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let path = "/v1/stream?regionId=\(region)"
            let slow = try await server.stream(path, receiveBufferBytes: 2048, pauseAfterHead: true)
            defer { slow.close() }
            #expect(slow.status == 200)
            // A reader of another region: it sees only the post after the bulk, which tells the test the hub is past it.
            let marker = try await server.stream("/v1/stream?regionId=\(elsewhere)")
            defer { marker.close() }
            try await Self.opening(marker)

            // 3,000 posts of 2,000 characters (6 kB of UTF-8 each) in one statement: far more than the kernel's
            // buffers take.
            let admin = Self.adminPool()
            defer { admin.shutdown() }
            let inserted = try await admin.query(
                """
                INSERT INTO posts (author_id, region_id, weather_type, category, body)
                SELECT \(Int(author.id)!), \(Int(region)!), 'rain', 'food', repeat('비', 1990) || ' ' || g::text FROM generate_series(1, 3000) g
                RETURNING id
                """
            ).map { String(try $0.decode(Int.self, "id")) }.sorted { Int($0)! < Int($1)! }
            #expect(inserted.count == 3000)
            let sign = try await Self.post(server, author, region: elsewhere)
            try await Self.expectEvent(marker, "post", sign, "the post after the bulk, in another region")

            let dropped = try await Self.metric(server, "stream_subscribers_dropped_total", reaches: 1)
            #expect(dropped != nil, "stream_subscribers_dropped_total never reached 1")
            #expect(await slow.waitForEnd(timeout: .seconds(30)), "the server did not end the slow reader's stream")
            #expect(slow.ended)
            let got = slow.drain().filter { $0.event == "post" }
            #expect(got.count < inserted.count, "the slow reader got everything (\(got.count)): it was never dropped")
            #expect(got.map(\.postID) == inserted.prefix(got.count).map(Optional.some), "what it got is the start of the bulk, in order")
            let lastID = try #require(slow.lastEventID)

            // It comes back with its last id: the rest of the bulk, none twice, then live.
            let resumed = try await server.stream(path, lastEventID: lastID)
            defer { resumed.close() }
            try await Self.opening(resumed, live: false)
            var rest: [String] = []
            for _ in got.count..<inserted.count {
                let message = try await resumed.nextEvent()
                guard message.event == "post", let id = message.postID else {
                    Issue.record("after \(rest.count) of the rest: \(message)")
                    break
                }
                rest.append(id)
            }
            #expect(rest == Array(inserted[got.count...]), "the rest: \(rest.count) posts, from \(rest.first ?? "-") to \(rest.last ?? "-")")
            let live = try await Self.post(server, author, region: region)
            try await Self.expectEvent(resumed, "post", live, "live after the catch-up")
            try await admin.execute("DELETE FROM posts WHERE author_id = \(Int(author.id)!)")
        }
    }

    @Test("limits: STREAM_MAX_PER_CLIENT streams per address (429 past it), STREAM_MAX per instance (503 past it)")
    func limits() async throws {
        try await withTestServer(configure: { $0.streamMaxPerClient = 3 }) { server in
            let region = try await Self.region(server)
            let address = TestClient.randomAddress()
            let clients = try await withThrowingTaskGroup(of: StreamClient.self) { group in
                for _ in 0..<10 { group.addTask { try await server.stream("/v1/stream?regionId=\(region)", clientIP: address) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            defer { clients.forEach { $0.close() } }
            let admitted = clients.filter { $0.status == 200 }
            let refused = clients.filter { $0.status == 429 }
            #expect(admitted.count == 3, "statuses \(clients.map(\.status))")
            #expect(refused.count == 7, "statuses \(clients.map(\.status))")
            for client in refused {
                #expect(client.errorCode == "rate_limited")
                #expect(client.header("retry-after").flatMap(Int.init) ?? 0 > 0)
            }
            for client in admitted { try await Self.opening(client) }
            let another = try await server.stream("/v1/stream?regionId=\(region)", clientIP: TestClient.randomAddress())
            defer { another.close() }
            #expect(another.status == 200)
        }
        try await withTestServer(configure: { $0.streamMax = 5 }) { server in
            var clients: [StreamClient] = []
            defer { clients.forEach { $0.close() } }
            for _ in 0..<5 {
                let client = try await server.stream("/v1/stream", clientIP: TestClient.randomAddress())
                clients.append(client)
                #expect(client.status == 200)
            }
            let sixth = try await server.stream("/v1/stream", clientIP: TestClient.randomAddress())
            defer { sixth.close() }
            #expect(sixth.status == 503)
            #expect(sixth.errorCode == "service_unavailable")
            #expect(sixth.header("retry-after").flatMap(Int.init) ?? 0 > 0)
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let queue = try await server.stream("/v1/moderation/stream", token: moderator.token, clientIP: TestClient.randomAddress())
            defer { queue.close() }
            #expect(queue.status == 503, "the moderation stream counts toward STREAM_MAX too")
        }
    }
}
