import Foundation
import Testing

/// More of the live board (CONTRACT §11): heartbeats, the term filter, blocks of prolific authors and unblocks, a
/// block made while the blocker's stream was away, banned moderators, languages, helpful marks, the moderation stream's
/// resume, and stream slots given back.
extension StreamTests {
    @Test("a heartbeat comment every STREAM_HEARTBEAT_SECONDS; events still come after it")
    func heartbeat() async throws {
        try await withTestServer(configure: {
            $0.rateLimitsEnabled = false
            $0.streamHeartbeatSeconds = 1
        }) { server in
            let region = try await Self.region(server)
            let client = try await server.stream("/v1/stream?regionId=\(region)", deliverComments: true)
            defer { client.close() }
            try await Self.opening(client)
            let beat = try await client.next()
            #expect(beat.comment == "", "a heartbeat is the comment line `:`: \(beat)")
            #expect(beat.event == nil && beat.data == nil && beat.id == nil)
            let author = try await server.anonymousAccount()
            let postID = try await Self.post(server, author, region: region)
            try await Self.expectEvent(client, "post", postID, "after a heartbeat")
        }
    }

    @Test("a post the term filter holds: `post` for its author (as visible) and moderators (hidden), nothing for strangers; dismissed, it appears")
    func termFilter() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let other = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let term = "스트림금지어\(UInt32.random(in: 0...UInt32.max))"
            _ = try await server.dependencies.moderation.addTerm(term)
            do {
                let stranger = try await server.stream("/v1/stream?regionId=\(region)")
                let own = try await server.stream("/v1/stream?regionId=\(region)", token: author.token)
                let moderating = try await server.stream("/v1/stream?regionId=\(region)", token: moderator.token)
                defer { [stranger, own, moderating].forEach { $0.close() } }
                for client in [stranger, own, moderating] { try await Self.opening(client) }

                let held = try await Self.post(server, author, region: region, body: "오늘의 추천 \(term) 최고")
                let sentinel = try await Self.post(server, other, region: region)
                try await Self.expectEvent(stranger, "post", sentinel, "nothing of the held post for a stranger")
                let ownHeld = try await Self.expectEvent(own, "post", held, "the author sees a held post as posted")
                #expect(ownHeld.json["status"] as? String == "visible", "the term filter does not tell its author: \(ownHeld)")
                try await Self.expectEvent(own, "post", sentinel)
                let moderatorHeld = try await Self.expectEvent(moderating, "post", held, "a moderator sees the held post")
                #expect(moderatorHeld.json["status"] as? String == "hidden")
                try await Self.expectEvent(moderating, "post", sentinel)

                #expect(try await server.json("POST", "/v1/moderation/posts/\(held)/decision", token: moderator.token, ["action": "dismiss"]).status == 200)
                try await Self.expectEvent(stranger, "post", held, "dismissed: it appears")
                let ownAfter = try await Self.expectEvent(own, "update", held)
                #expect(ownAfter.json["status"] as? String == "visible")
                let moderatorAfter = try await Self.expectEvent(moderating, "update", held)
                #expect(moderatorAfter.json["status"] as? String == "visible")
            } catch {
                _ = try? await server.dependencies.moderation.removeTerm(term)
                throw error
            }
            #expect(try await server.dependencies.moderation.removeTerm(term))
        }
    }

    @Test("blocking an author with more than a hundred posts resets the blocker's streams; an unblock resets them too")
    func blockManyAndUnblock() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let prolific = try await server.anonymousAccount()
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
            let admin = Self.adminPool()
            defer { admin.shutdown() }
            let bulk = try await admin.query(
                """
                INSERT INTO posts (author_id, region_id, weather_type, category, body)
                SELECT \(Int(prolific.id)!), \(Int(region)!), 'rain', 'food', '많이 쓴 글 ' || g::text FROM generate_series(1, 101) g RETURNING id
                """
            ).map { String(try $0.decode(Int.self, "id")) }.sorted { Int($0)! < Int($1)! }
            for client in [blockerStream, reader] {
                for id in bulk { try await Self.expectEvent(client, "post", id, "the bulk") }
            }
            #expect(try await server.json("POST", "/v1/accounts/me/blocks", token: blocker.token, ["accountId": prolific.id]).status == 204)
            let reset = try await blockerStream.nextEvent()
            #expect(reset.event == "reset", "a block past a hundred posts: \(reset)")
            #expect(reset.id != nil)
            let blockedPost = try await Self.post(server, prolific, region: region)
            let sentinel = try await Self.post(server, other, region: region)
            try await Self.expectEvent(blockerStream, "post", sentinel, "nothing of the blocked author after the reset")
            try await Self.expectEvent(reader, "post", blockedPost, "the block is the blocker's alone")
            try await Self.expectEvent(reader, "post", sentinel)

            #expect(try await server.json("DELETE", "/v1/accounts/me/blocks/\(prolific.id)", token: blocker.token).status == 204)
            let unblocked = try await blockerStream.nextEvent()
            #expect(unblocked.event == "reset", "an unblock: \(unblocked)")
            let again = try await Self.post(server, prolific, region: region)
            try await Self.expectEvent(blockerStream, "post", again, "the unblocked author's new post")
            try await Self.expectEvent(reader, "post", again)
        }
    }

    @Test("a blocker's stream resuming from before a block made while it was away gets the blocked author's posts removed")
    func blockWhileAway() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let blocked = try await server.anonymousAccount()
            let blocker = try await server.anonymousAccount()
            let other = try await server.anonymousAccount()
            let path = "/v1/stream?regionId=\(region)"
            let first = try await server.stream(path, token: blocker.token)
            try await Self.opening(first)
            let postID = try await Self.post(server, blocked, region: region)
            try await Self.expectEvent(first, "post", postID)
            first.close()
            let lastID = try #require(first.lastEventID)

            // Blocked from another device while this stream was away.
            #expect(try await server.json("POST", "/v1/accounts/me/blocks", token: blocker.token, ["accountId": blocked.id]).status == 204)
            let resumed = try await server.stream(path, token: blocker.token, lastEventID: lastID)
            defer { resumed.close() }
            try await Self.opening(resumed, live: false)
            let sentinel = try await Self.post(server, other, region: region)
            let message = try await resumed.nextEvent()
            #expect(
                message.event == "remove" && message.postID == postID,
                "the resumed stream should remove the post of the author blocked while it was away (it showed it), got \(message)"
            )
            if message.postID != sentinel { try await Self.expectEvent(resumed, "post", sentinel) }
        }
    }

    @Test("a banned moderator gets 403 account_banned on the moderation stream")
    func bannedModerator() async throws {
        try await withTestServer { server in
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let allowed = try await server.stream("/v1/moderation/stream", token: moderator.token)
            #expect(allowed.status == 200)
            allowed.close()
            try await server.dependencies.database.execute(
                "UPDATE accounts SET banned = true, banned_until = NULL, ban_reason = '스트림 테스트' WHERE id = \(Int(moderator.id)!)"
            )
            let banned = try await server.stream("/v1/moderation/stream", token: moderator.token)
            defer { banned.close() }
            #expect(banned.status == 403)
            #expect(banned.errorCode == "account_banned")
        }
    }

    @Test("each reader gets the post in its own language, as GET gives it with the same Accept-Language")
    func languages() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            // Seoul has a Korean and an English name; other suites post there too, so this test picks its own post out.
            let path = "/v1/stream?regionId=1835848&weatherType=mist&category=place"
            let korean = try await server.stream(path, headers: [("Accept-Language", "ko")])
            let english = try await server.stream(path, headers: [("Accept-Language", "en")])
            defer {
                korean.close()
                english.close()
            }
            try await Self.opening(korean)
            try await Self.opening(english)
            let author = try await server.anonymousAccount()
            let postID = try await Self.post(server, author, region: "1835848", weatherType: "mist", category: "place")
            for (language, name, client) in [("ko", "서울", korean), ("en", "Seoul", english)] {
                let event = try await client.nextEvent(about: [postID])
                #expect(event.event == "post")
                #expect((event.json["region"] as? [String: Any])?["name"] as? String == name, "\(language): \(event)")
                let read = try await server.json("GET", "/v1/posts/\(postID)", headers: [("Accept-Language", language)])
                #expect(Self.sameJSON(event.json, read.object), "\(language): stream \(event.data ?? "") vs GET \(read.text)")
            }
        }
    }

    @Test("`update` shows helpedByMe to the reader who marked the post, not to others")
    func helpedByMe() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let marker = try await server.anonymousAccount()
            let markerStream = try await server.stream("/v1/stream?regionId=\(region)", token: marker.token)
            let stranger = try await server.stream("/v1/stream?regionId=\(region)")
            defer {
                markerStream.close()
                stranger.close()
            }
            try await Self.opening(markerStream)
            try await Self.opening(stranger)
            let postID = try await Self.post(server, author, region: region)
            try await Self.expectEvent(markerStream, "post", postID)
            try await Self.expectEvent(stranger, "post", postID)
            let marked = try await server.json("PUT", "/v1/posts/\(postID)/helpful", token: marker.token)
            #expect(marked.status == 200, "helpful answered \(marked.status): \(marked.text)")
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: author.token, ["body": "도움이 된 글"]).status == 200)
            let mine = try await Self.expectEvent(markerStream, "update", postID)
            #expect(mine.json["helpedByMe"] as? Bool == true)
            #expect(mine.json["helpfulCount"] as? Int == 1)
            let theirs = try await Self.expectEvent(stranger, "update", postID)
            #expect(theirs.json["helpedByMe"] as? Bool == false)
            #expect(theirs.json["helpfulCount"] as? Int == 1)
            let read = try await server.json("GET", "/v1/posts/\(postID)", token: marker.token)
            #expect(Self.sameJSON(mine.json, read.object), "stream \(mine.data ?? "") vs GET \(read.text)")
        }
    }

    @Test("the moderation stream resumes with Last-Event-ID: the reports it missed, then live")
    func moderationResume() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let postID = try await Self.post(server, author, region: region)
            let queue = try await server.stream("/v1/moderation/stream", token: moderator.token)
            try await Self.opening(queue)
            let report = { (account: TestAccount) in
                try await server.json("POST", "/v1/posts/\(postID)/reports", token: account.token, ["reason": "spam"]).status
            }
            #expect(try await report(try await server.anonymousAccount()) == 201)
            let first = try await queue.nextEvent(about: [postID])
            #expect(first.event == "report")
            queue.close()
            let lastID = try #require(first.id)

            #expect(try await report(try await server.anonymousAccount()) == 201)
            let resumed = try await server.stream("/v1/moderation/stream", token: moderator.token, lastEventID: lastID)
            defer { resumed.close() }
            try await Self.opening(resumed, live: false)
            let missed = try await resumed.nextEvent(about: [postID])
            #expect(missed.event == "report", "\(missed)")
            #expect(missed.json["openReportCount"] as? Int == 2)
            #expect(try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "remove"]).status == 200)
            let resolved = try await resumed.nextEvent(about: [postID])
            #expect(resolved.event == "resolved" && resolved.json["action"] as? String == "remove", "\(resolved)")
        }
    }

    @Test("a closed stream gives its slot back: the address that was at STREAM_MAX_PER_CLIENT gets in again; stream_open follows")
    func slotsGivenBack() async throws {
        // Heartbeats an hour apart: the slot must come back because the client closed, not because a heartbeat's write
        // failed.
        try await withTestServer(configure: {
            $0.streamMaxPerClient = 2
            $0.streamHeartbeatSeconds = 3600
        }) { server in
            let address = TestClient.randomAddress()
            let path = "/v1/stream?regionId=\(try await Self.region(server))"
            var clients: [StreamClient] = []
            for _ in 0..<2 { clients.append(try await server.stream(path, clientIP: address)) }
            #expect(clients.map(\.status) == [200, 200])
            let third = try await server.stream(path, clientIP: address)
            #expect(third.status == 429)
            third.close()
            #expect(try await Self.metric(server, #"stream_open{stream="board"}"#) == 2)
            clients.forEach { $0.close() }
            // The server notices the closes on its own time: the gauge is polled down to zero (with a deadline).
            let clock = ContinuousClock()
            let end = clock.now + .seconds(20)
            var open = try await Self.metric(server, #"stream_open{stream="board"}"#)
            while open != 0 && clock.now < end {
                try await Task.sleep(for: .milliseconds(50))  // the poll's interval
                open = try await Self.metric(server, #"stream_open{stream="board"}"#)
            }
            #expect(open == 0, "stream_open stayed at \(open.map { "\($0)" } ?? "none") after every stream closed")
            var again: [StreamClient] = []
            defer { again.forEach { $0.close() } }
            for _ in 0..<2 { again.append(try await server.stream(path, clientIP: address)) }
            #expect(again.map(\.status) == [200, 200])
        }
    }
}
