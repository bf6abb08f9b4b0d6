import CurlClient
import Database
import Foundation
import Testing

/// CONTRACT §1, "Who sees what is one rule": for each kind of reader, every route that lists posts, in every order,
/// walks the same set of posts for the same filters; deleted posts reach moderators only by id; a reader's own post
/// held by the term filter reads, takes replies and edits as a visible one.
@Suite("One visibility rule: every route, every order, every reader")
struct VisibilityWalkTests {
    /// The posts of one walk: every page of `path`, only the ids of `ours`.
    static func walk(_ server: TestServer, _ path: String, token: String?, ours: Set<String>, items: (CurlResponse) -> [[String: Any]] = { $0.items },
                     cursor: (CurlResponse) -> String? = { $0.object["nextCursor"] as? String }) async throws -> Set<String> {
        let seen = try await FitSortTests.walk(server, path, token: token, items: items, cursor: cursor)
        #expect(Set(seen).count == seen.count, "\(path): a post came twice")
        return Set(seen).intersection(ours)
    }

    @Test("lists, search, the feed and the outfit posts in new, top, hot and fit give each reader the same posts; deleted ones only by id")
    func everyRouteEveryOrder() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.setBody(openMeteoBody(feelsLike: 21.0, weatherCode: 61), for: .openMeteo)  // rain, mild
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let region = try await fitRegions(rig.database, offset: 40, count: 1)[0]
            try await rig.forget([region])
            try await withTestServer(configure: { $0.rateLimitsEnabled = false }, dependencies: rig.dependencies) { server in
                let marker = "visiwalk\(UInt32.random(in: 0...UInt32.max))"
                let term = "heldterm\(UInt32.random(in: 0...UInt32.max))"
                _ = try await server.dependencies.moderation.addTerm(term)
                let author = try await server.anonymousAccount()
                let other = try await server.anonymousAccount()
                let member = try await server.anonymousAccount()
                let blocker = try await server.anonymousAccount()
                let (moderator, bannedModerator) = try await server.staff()
                #expect(try await server.json("POST", "/v1/accounts/me/blocks", token: blocker.token, ["accountId": other.id]).status == 204)

                func post(_ account: TestAccount, _ text: String) async throws -> String {
                    let created = try await server.createPost(account, weatherType: "rain", category: "outfit", body: "\(marker) \(text)", regionId: String(region))
                    return try #require(created["id"] as? String)
                }
                let visible = try await post(author, "visible")
                let held = try await post(author, "held \(term)")
                let hidden = try await post(author, "hidden by reports")
                let removed = try await post(author, "removed")
                let deleted = try await post(author, "deleted")
                let otherVisible = try await post(other, "visible")
                let otherHeld = try await post(other, "held \(term)")
                let otherDeleted = try await post(other, "deleted")
                let database = server.dependencies.database
                try await database.execute("UPDATE posts SET status = 'hidden', hidden_reason = 'reports' WHERE id = \(Int(hidden)!)")
                try await database.execute("UPDATE posts SET status = 'removed', hidden_reason = NULL WHERE id = \(Int(removed)!)")
                #expect(try await server.json("DELETE", "/v1/posts/\(deleted)", token: author.token).status == 204)
                #expect(try await server.json("DELETE", "/v1/posts/\(otherDeleted)", token: other.token).status == 204)
                // Bands spread over every fit group (the band outside is mild), so each group's walk has work to do.
                for (id, band) in [(visible, "mild"), (held, "cool"), (hidden, "freezing"), (removed, nil), (deleted, "mild"),
                                   (otherVisible, "hot"), (otherHeld, "mild"), (otherDeleted, "warm")] as [(String, String?)] {
                    let feels: Double? = band.map { ["hot": 30, "warm": 25, "mild": 21, "cool": 18, "freezing": -3][$0]! }
                    try await database.execute(
                        """
                        UPDATE posts SET conditions_weather_type = \(band == nil ? nil : "rain"), conditions_band = \(band),
                            conditions_feels_like = \(feels), conditions_observed_at = \(band == nil ? nil : Date())
                        WHERE id = \(Int(id)!)
                        """
                    )
                }
                let ours: Set<String> = [visible, held, hidden, removed, deleted, otherVisible, otherHeld, otherDeleted]
                let expected: [(name: String, token: String?, posts: Set<String>)] = [
                    ("anonymous", nil, [visible, otherVisible]),
                    ("member", member.token, [visible, otherVisible]),
                    ("author", author.token, [visible, held, hidden, removed, otherVisible]),
                    ("blocker", blocker.token, [visible]),
                    ("moderator", moderator.token, [visible, held, hidden, removed, otherVisible, otherHeld]),
                    ("banned moderator", bannedModerator.token, [visible, otherVisible]),
                ]
                let sorts = ["new", "top", "hot", "fit"]
                var routes: [(String, (CurlResponse) -> [[String: Any]], (CurlResponse) -> String?)] = []
                let list: (CurlResponse) -> [[String: Any]] = { $0.items }
                let next: (CurlResponse) -> String? = { $0.object["nextCursor"] as? String }
                let outfitItems: (CurlResponse) -> [[String: Any]] = { ($0.object["posts"] as? [String: Any])?["items"] as? [[String: Any]] ?? [] }
                let outfitNext: (CurlResponse) -> String? = { ($0.object["posts"] as? [String: Any])?["nextCursor"] as? String }
                for sort in sorts {
                    routes.append(("/v1/posts?regionId=\(region)&sort=\(sort)&limit=3", list, next))
                    routes.append(("/v1/posts?regionId=\(region)&weatherType=rain&category=outfit&sort=\(sort)&limit=3", list, next))
                    routes.append(("/v1/posts?regionId=\(region)&q=\(marker)&sort=\(sort)&limit=3", list, next))
                    routes.append(("/v1/feed?regionId=\(region)&regionOnly=true&sort=\(sort)&limit=3", list, next))
                    routes.append(("/v1/regions/\(region)/outfit?sort=\(sort)&limit=100", outfitItems, outfitNext))
                }
                for reader in expected {
                    for (path, items, cursor) in routes {
                        let seen = try await Self.walk(server, path, token: reader.token, ours: ours, items: items, cursor: cursor)
                        #expect(seen == reader.posts, "\(reader.name), \(path): \(seen.sorted()) vs \(reader.posts.sorted())")
                    }
                    // One author's posts: the same rule, narrowed to the author.
                    for sort in sorts where sort != "fit" {
                        for account in [author, other] {
                            let path = "/v1/posts?authorId=\(account.id)&sort=\(sort)&limit=3"
                            let mine = try await Self.walk(server, path, token: reader.token, ours: ours)
                            let theirs = try await Self.walk(server, path + "&q=\(marker)", token: reader.token, ours: ours)
                            let wanted = reader.posts.intersection(account.id == author.id ? [visible, held, hidden, removed, deleted] : [otherVisible, otherHeld, otherDeleted])
                            #expect(mine == wanted, "\(reader.name), \(path): \(mine.sorted()) vs \(wanted.sorted())")
                            #expect(theirs == wanted, "\(reader.name), \(path)&q=: \(theirs.sorted()) vs \(wanted.sorted())")
                        }
                    }
                }
                // Deleted posts reach moderators by id, with their status; everyone else, the author included, gets 404.
                for id in [deleted, otherDeleted] {
                    let read = try await server.json("GET", "/v1/posts/\(id)", token: moderator.token)
                    #expect(read.status == 200 && read.object["status"] as? String == "deleted")
                    for token in [nil, author.token, other.token, bannedModerator.token] {
                        #expect(try await server.json("GET", "/v1/posts/\(id)", token: token).status == 404)
                    }
                }
            }
        }
    }

    @Test("an author's own held post reads, takes replies, lists its replies and edits as a visible post; others get 404")
    func heldPostBehavesAsVisibleToItsAuthor() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let term = "heldreply\(UInt32.random(in: 0...UInt32.max))"
            _ = try await server.dependencies.moderation.addTerm(term)
            let author = try await server.anonymousAccount()
            let stranger = try await server.anonymousAccount()
            let post = try await server.createPost(author, body: "시작 \(term)")
            let id = try #require(post["id"] as? String)
            #expect(post["status"] as? String == "visible")
            let read = try await server.json("GET", "/v1/posts/\(id)", token: author.token)
            #expect(read.status == 200 && read.object["status"] as? String == "visible")
            let reply = try await server.json("POST", "/v1/posts/\(id)/replies", token: author.token, ["body": "내 글에 답글"])
            #expect(reply.status == 201, "\(reply.text)")
            let replies = try await server.json("GET", "/v1/posts/\(id)/replies", token: author.token)
            #expect(replies.status == 200 && replies.items.count == 1, "\(replies.text)")
            let edit = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, ["body": "고친 글 \(term)"])
            #expect(edit.status == 200 && edit.object["status"] as? String == "visible", "\(edit.text)")
            // A stranger learns nothing: the post and its replies are not found.
            #expect(try await server.json("GET", "/v1/posts/\(id)", token: stranger.token).status == 404)
            #expect(try await server.json("POST", "/v1/posts/\(id)/replies", token: stranger.token, ["body": "누구?"]).status == 404)
            #expect(try await server.json("GET", "/v1/posts/\(id)/replies", token: stranger.token).status == 404)
            // A reply made while a post was visible stays in its author's inbox, and counts as unread, once the
            // term filter holds the post on an edit.
            let open = try #require(try await server.createPost(author, body: "열린 글")["id"] as? String)
            let answer = try await server.json("POST", "/v1/posts/\(open)/replies", token: stranger.token, ["body": "좋네요"])
            #expect(answer.status == 201)
            #expect(try await server.json("PATCH", "/v1/posts/\(open)", token: author.token, ["body": "열린 글 \(term)"]).status == 200)
            let inbox = try await server.json("GET", "/v1/accounts/me/inbox", token: author.token)
            #expect(inbox.items.compactMap { $0["id"] as? String } == [answer.object["id"] as? String].compactMap { $0 }, "\(inbox.text)")
            #expect(inbox.object["unread"] as? Int == 1, "\(inbox.text)")
            // A post hidden by reports is not the author's to reply to: the author may know of that hold.
            try await server.dependencies.database.execute("UPDATE posts SET hidden_reason = 'reports' WHERE id = \(Int(id)!)")
            let refused = try await server.json("POST", "/v1/posts/\(id)/replies", token: author.token, ["body": "또"])
            #expect(refused.status == 403 && refused.errorCode == "forbidden")
        }
    }
}
