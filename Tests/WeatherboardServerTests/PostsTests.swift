import CurlClient
import Database
import Foundation
import Testing

@Suite("Posts")
struct PostsTests {
    @Test("a created post has the contract's shape; text is NFC, \\r\\n → \\n and trimmed; absent title is null")
    func create() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let account = try await server.anonymousAccount()
            let decomposed = "\u{1100}\u{1161}"  // 가 as conjoining jamo
            let post = try await server.createPost(account, weatherType: "clearSky", category: "place", body: "  \(decomposed) 한강 공원\r\n산책  \n")
            #expect(post["body"] as? String == "가 한강 공원\n산책")
            #expect(post.keys.contains("title") && post["title"] is NSNull)
            #expect(post["weatherType"] as? String == "clearSky")
            #expect(post["category"] as? String == "place")
            #expect(post["isMine"] as? Bool == true)
            #expect(post["edited"] as? Bool == false)
            #expect(post["status"] as? String == "visible")
            let region = try #require(post["region"] as? [String: Any])
            #expect(region["id"] as? String == "1835848")
            #expect(region["name"] as? String == "서울")
            #expect(region["countryCode"] as? String == "KR")
            let author = try #require(post["author"] as? [String: Any])
            #expect(author["id"] as? String == account.id)
            #expect((post["createdAt"] as? String)?.hasSuffix("Z") == true)

            // A stranger sees no status and isMine false; English names on request.
            let id = try #require(post["id"] as? String)
            let read = try await server.json("GET", "/v1/posts/\(id)", headers: [("Accept-Language", "en-US,en;q=0.9")])
            #expect(read.status == 200)
            #expect(read.object["isMine"] as? Bool == false)
            #expect(read.object.keys.contains("status") == false)
            #expect((read.object["region"] as? [String: Any])?["name"] as? String == "Seoul")
        }
    }

    @Test(
        "bodies of 2,000 Korean characters, emoji and quotes round-trip unchanged",
        arguments: [String(repeating: "날", count: 2000), "☔️ 우산 🌂 \"quoted\" 'single' \\ back\\slash", "🧑‍🤝‍🧑 tab\there"]
    )
    func roundTrip(_ body: String) async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let account = try await server.anonymousAccount()
            let post = try await server.createPost(account, title: "제목 \"따옴표\"", body: body)
            let read = try await server.json("GET", "/v1/posts/\(post["id"] as! String)")
            #expect(read.object["body"] as? String == body)
            #expect(read.object["title"] as? String == "제목 \"따옴표\"")
        }
    }

    @Test(
        "invalid posts are 422 invalid_field naming the field",
        arguments: [
            (["weatherType": "unknown", "category": "food", "body": "x", "regionId": "1835848"], "weatherType"),
            (["weatherType": "sunny", "category": "food", "body": "x", "regionId": "1835848"], "weatherType"),
            (["weatherType": "rain", "category": "drinks", "body": "x", "regionId": "1835848"], "category"),
            (["weatherType": "rain", "category": "food", "body": "   \n ", "regionId": "1835848"], "body"),
            (["weatherType": "rain", "category": "food", "body": String(repeating: "가", count: 2001), "regionId": "1835848"], "body"),
            (["weatherType": "rain", "category": "food", "title": String(repeating: "t", count: 101), "body": "x", "regionId": "1835848"], "title"),
            (["weatherType": "rain", "category": "food", "body": "bell\u{7}", "regionId": "1835848"], "body"),
            (["weatherType": "rain", "category": "food", "body": "x", "regionId": "424242424242"], "regionId"),
            (["weatherType": "rain", "category": "food", "body": "x"], "regionId"),
            (["weatherType": "rain", "body": "x", "regionId": "1835848"], "category"),
            (["weatherType": "rain", "category": "food", "body": 42, "regionId": "1835848"] as [String: any Sendable], "body"),
        ] as [([String: any Sendable], String)]
    )
    func invalid(_ payload: [String: any Sendable], _ field: String) async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let account = try await server.anonymousAccount()
            let response = try await server.json("POST", "/v1/posts", token: account.token, payload)
            #expect(response.status == 422)
            #expect(response.errorCode == "invalid_field")
            #expect(response.errorMessage?.hasPrefix(field) == true, "message: \(response.errorMessage ?? "")")
        }
    }

    @Test("malformed JSON is 400; no token is 401")
    func malformed() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let bad = try await server.request("POST", "/v1/posts", headers: [("Authorization", "Bearer \(account.token)")], body: Array("{\"weatherType\": ".utf8))
            #expect(bad.status == 400)
            #expect(bad.errorCode == "bad_request")
            let latin1 = try await server.request("POST", "/v1/posts", headers: [("Authorization", "Bearer \(account.token)")], body: [0x7b, 0xff, 0xfe, 0x7d])
            #expect(latin1.status == 400)
            let anonymous = try await server.json("POST", "/v1/posts", ["weatherType": "rain", "category": "food", "body": "x", "regionId": "1835848"])
            #expect(anonymous.status == 401)
        }
    }

    @Test("a location snaps to the nearest region and is not stored")
    func locationSnapping() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let account = try await server.anonymousAccount()
            let response = try await server.json(
                "POST", "/v1/posts", token: account.token,
                ["weatherType": "mist", "category": "activity", "body": "해운대 안개", "location": ["lat": 35.1028, "lon": 129.0403]]
            )
            #expect(response.status == 201)
            #expect((response.object["region"] as? [String: Any])?["id"] as? String == "1838524")
            let bad = try await server.json(
                "POST", "/v1/posts", token: account.token,
                ["weatherType": "mist", "category": "activity", "body": "x", "location": ["lat": 95, "lon": 0]]
            )
            #expect(bad.status == 422)
            // `location` is instead of `regionId`: both at once is 422 naming location (an invalid one was ignored before).
            for point in [["lat": 0, "lon": 181], ["lat": 35.1028, "lon": 129.0403]] {
                let both = try await server.json(
                    "POST", "/v1/posts", token: account.token,
                    ["weatherType": "mist", "category": "activity", "body": "x", "regionId": "1835848", "location": point]
                )
                #expect(both.status == 422)
                #expect(both.errorCode == "invalid_field")
                #expect(both.errorMessage?.hasPrefix("location") == true)
            }
        }
    }

    @Test("the same Idempotency-Key replays the first post; a different body with it is 409")
    func idempotency() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let account = try await server.anonymousAccount()
            let key = UUID().uuidString
            let first = try await server.createPost(account, body: "한 번만", headers: [("Idempotency-Key", key)])
            let second = try await server.createPost(account, body: "한 번만", headers: [("Idempotency-Key", key)])
            #expect(first["id"] as? String == second["id"] as? String)
            let conflict = try await server.json(
                "POST", "/v1/posts", token: account.token, headers: [("Idempotency-Key", key)],
                ["weatherType": "rain", "category": "food", "body": "다른 내용", "regionId": "1835848"]
            )
            #expect(conflict.status == 409)
            #expect(conflict.errorCode == "idempotency_conflict")
            // Another account may use the same key for its own post.
            let other = try await server.anonymousAccount()
            let theirs = try await server.createPost(other, body: "한 번만", headers: [("Idempotency-Key", key)])
            #expect(theirs["id"] as? String != first["id"] as? String)
        }
    }

    @Test("20 parallel requests with one Idempotency-Key make exactly one post")
    func idempotencyUnderConcurrency() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let account = try await server.anonymousAccount()
            let key = UUID().uuidString
            let ids = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let response = try await server.json(
                            "POST", "/v1/posts", token: account.token, headers: [("Idempotency-Key", key)],
                            ["weatherType": "snow", "category": "outfit", "body": "패딩 필수", "regionId": "1835848"]
                        )
                        return response.status == 201 ? response.object["id"] as? String : nil
                    }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(ids.allSatisfy { $0 != nil })
            #expect(Set(ids.compactMap { $0 }).count == 1)
            let count = try await server.dependencies.database.query(
                "SELECT count(*) AS n FROM posts WHERE author_id = \(Int(account.id)!)"
            )[0].decode(Int.self, "n")
            #expect(count == 1)
        }
    }

    @Test("idempotency holds across two server processes sharing one database")
    func idempotencyAcrossInstances() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { first in
            try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { second in
                let account = try await first.anonymousAccount()
                let key = UUID().uuidString
                let ids = try await withThrowingTaskGroup(of: String?.self) { group in
                    for i in 0..<10 {
                        let server = i % 2 == 0 ? first : second
                        group.addTask {
                            try await server.createPost(account, body: "두 대의 서버", headers: [("Idempotency-Key", key)])["id"] as? String
                        }
                    }
                    return try await group.reduce(into: Set<String?>()) { $0.insert($1) }
                }
                #expect(ids.count == 1)
                #expect(ids.first! != nil)
            }
        }
    }

    @Test("lists: newest first, filters combine, keyset pages neither repeat nor skip across inserts and deletes")
    func listsAndPagination() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            var created: [String] = []
            for i in 0..<7 {
                let post = try await server.createPost(author, weatherType: i % 2 == 0 ? "thunderStorm" : "fewClouds", category: i < 4 ? "music" : "food", body: "post \(i)")
                created.append(post["id"] as! String)
            }
            let base = "/v1/posts?authorId=\(author.id)"
            let all = try await server.json("GET", base)
            #expect(all.items.map { $0["id"] as! String } == created.reversed())
            let combined = try await server.json("GET", base + "&weatherType=thunderStorm&category=music&regionId=1835848")
            #expect(combined.items.map { $0["id"] as! String } == [created[2], created[0]])

            // Page 1 of 3, then a new post and a deletion, then page 2: nothing repeated or skipped.
            let page1 = try await server.json("GET", base + "&limit=3")
            #expect(page1.items.map { $0["id"] as! String } == [created[6], created[5], created[4]])
            let cursor = try #require(page1.object["nextCursor"] as? String)
            _ = try await server.createPost(author, body: "newer")
            #expect(try await server.json("DELETE", "/v1/posts/\(created[6])", token: author.token).status == 204)
            let page2 = try await server.json("GET", base + "&limit=3&cursor=\(cursor)")
            #expect(page2.items.map { $0["id"] as! String } == [created[3], created[2], created[1]])
            let page3 = try await server.json("GET", base + "&limit=3&cursor=\(page2.object["nextCursor"] as! String)")
            #expect(page3.items.map { $0["id"] as! String } == [created[0]])
            #expect(page3.object.keys.contains("nextCursor") && page3.object["nextCursor"] is NSNull)

            #expect(try await server.json("GET", "/v1/posts?limit=500").items.count <= 100)
            for bad in ["limit=abc", "limit=0", "cursor=garbage!!", "cursor=Zm9v", "weatherType=unknown", "category=drinks", "regionId=abc"] {
                let response = try await server.json("GET", "/v1/posts?\(bad)")
                #expect(response.status == 400, "\(bad) answered \(response.status)")
                #expect(response.errorCode == "bad_request")
            }
            #expect(try await server.json("GET", "/v1/posts/abc").errorCode == "not_found")
            #expect(try await server.json("GET", "/v1/posts/99999999999").status == 404)
        }
    }

    @Test("hidden and removed posts: 404 to strangers, shown with status to the author and to moderators")
    func visibility() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let stranger = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let post = try await server.createPost(author, weatherType: "showerRain")
            let id = try #require(post["id"] as? String)
            try await server.dependencies.database.execute("UPDATE posts SET status = 'hidden', hidden_reason = 'reports' WHERE id = \(Int(id)!)")

            #expect(try await server.json("GET", "/v1/posts/\(id)").status == 404)
            #expect(try await server.json("GET", "/v1/posts/\(id)", token: stranger.token).status == 404)
            let own = try await server.json("GET", "/v1/posts/\(id)", token: author.token)
            #expect(own.status == 200)
            #expect(own.object["status"] as? String == "hidden")
            let moderated = try await server.json("GET", "/v1/posts/\(id)", token: moderator.token)
            #expect(moderated.object["status"] as? String == "hidden")

            let publicList = try await server.json("GET", "/v1/posts?authorId=\(author.id)", token: stranger.token)
            #expect(publicList.items.isEmpty)
            let authorList = try await server.json("GET", "/v1/posts?authorId=\(author.id)", token: author.token)
            #expect(authorList.items.map { $0["status"] as? String } == ["hidden"])
            let mine = try await server.json("GET", "/v1/accounts/me/posts", token: author.token)
            #expect(mine.items.map { $0["status"] as? String } == ["hidden"])

            // A stranger can neither edit nor delete what they cannot see.
            #expect(try await server.json("PATCH", "/v1/posts/\(id)", token: stranger.token, ["body": "x"]).status == 404)

            // Deleted: gone even for the author, still visible to moderators.
            #expect(try await server.json("DELETE", "/v1/posts/\(id)", token: author.token).status == 204)
            #expect(try await server.json("DELETE", "/v1/posts/\(id)", token: author.token).status == 204)
            #expect(try await server.json("GET", "/v1/posts/\(id)", token: author.token).status == 404)
            #expect(try await server.json("GET", "/v1/posts/\(id)", token: moderator.token).status == 200)
            #expect(try await server.json("GET", "/v1/accounts/me/posts", token: author.token).items.isEmpty)
        }
    }

    @Test("edits: only the author (403 not_owner), each kept as a revision; banned authors get 403 account_banned")
    func edits() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let stranger = try await server.anonymousAccount()
            let post = try await server.createPost(author, title: "처음", body: "first body")
            let id = try #require(post["id"] as? String)

            let denied = try await server.json("PATCH", "/v1/posts/\(id)", token: stranger.token, ["body": "hijack"])
            #expect(denied.status == 403)
            #expect(denied.errorCode == "not_owner")
            #expect(try await server.json("DELETE", "/v1/posts/\(id)", token: stranger.token).errorCode == "not_owner")

            let edited = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, ["body": "second body", "category": "music"])
            #expect(edited.status == 200)
            #expect(edited.object["body"] as? String == "second body")
            #expect(edited.object["category"] as? String == "music")
            #expect(edited.object["title"] as? String == "처음")
            #expect(edited.object["edited"] as? Bool == true)
            #expect((edited.object["updatedAt"] as? String) != nil)
            let cleared = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, ["title": NSNull()])
            #expect(cleared.object["title"] is NSNull)
            let invalid = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, ["weatherType": "unknown"])
            #expect(invalid.status == 422)

            let revisions = try await server.dependencies.database.query(
                "SELECT body, title FROM post_revisions WHERE post_id = \(Int(id)!) ORDER BY id"
            )
            #expect(try revisions.map { try $0.decode(String.self, "body") } == ["first body", "second body"])

            try await server.dependencies.database.execute("UPDATE accounts SET banned = true WHERE id = \(Int(author.id)!)")
            let banned = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, ["body": "third"])
            #expect(banned.status == 403)
            #expect(banned.errorCode == "account_banned")
            let bannedPost = try await server.json("POST", "/v1/posts", token: author.token, ["weatherType": "rain", "category": "food", "body": "x", "regionId": "1835848"])
            #expect(bannedPost.errorCode == "account_banned")
            #expect(try await server.json("GET", "/v1/posts/\(id)", token: author.token).status == 200)
        }
    }

    @Test("a moderator may delete anyone's post")
    func moderatorDelete() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let id = try #require(try await server.createPost(author)["id"] as? String)
            #expect(try await server.json("DELETE", "/v1/posts/\(id)", token: moderator.token).status == 204)
            #expect(try await server.json("GET", "/v1/posts/\(id)").status == 404)
        }
    }

    @Test("anonymous accounts may post 3 times per 10 minutes, then 429 with Retry-After")
    func postingRateLimit() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            for _ in 0..<3 { _ = try await server.createPost(account) }
            let limited = try await server.json("POST", "/v1/posts", token: account.token, ["weatherType": "rain", "category": "food", "body": "x", "regionId": "1835848"])
            #expect(limited.status == 429)
            #expect(limited.errorCode == "rate_limited")
            #expect(Int(limited.header("retry-after") ?? "") ?? 0 >= 1)
        }
    }

    @Test("weather types and categories are listed in Korean by default and in English on request")
    func vocabulary() async throws {
        try await withTestServer { server in
            let ko = try await server.json("GET", "/v1/weather-types")
            #expect(ko.items.count == 9)
            #expect(ko.items.first?["id"] as? String == "clearSky")
            #expect(ko.items.first?["name"] as? String == "맑음")
            #expect(ko.items.first?["description"] as? String == "맑고 화창한 날씨!")
            #expect(ko.items.first?["icon"] as? String == "01")
            #expect(ko.object.keys.contains("nextCursor"))
            let en = try await server.json("GET", "/v1/weather-types", headers: [("Accept-Language", "en")])
            #expect(en.items.first?["name"] as? String == "Clear sky")
            let categories = try await server.json("GET", "/v1/categories")
            #expect(categories.items.map { $0["name"] as? String } == ["음식", "장소", "음악", "옷차림", "활동"])
        }
    }
}
