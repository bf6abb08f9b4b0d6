import CurlClient
import Database
import Foundation
import Testing
import Weather

/// `sort=fit` (CONTRACT §9): the posts of the band outside first, then of its neighbours, then of the other bands,
/// then those without conditions, each group in `hot` order; the feed's and the outfit posts' default; its cursor.
@Suite("Fit order")
struct FitSortTests {
    /// Posts in `region` with conditions in each band given (nil: none), trusted marks and ages spread so `hot`
    /// orders each group differently from `new`. Returns their ids.
    static func seed(_ server: TestServer, author: TestAccount, region: Int, bands: [String?], category: String = "food", label: String = "fit") async throws -> [String] {
        var ids: [String] = []
        for (i, band) in bands.enumerated() {
            let feels: Double? = band.map { ["hot": 30, "warm": 25, "mild": 21, "cool": 18, "chilly": 14, "cold": 10, "veryCold": 6, "freezing": -3][$0]! }
            let row = try await server.dependencies.database.query(
                """
                INSERT INTO posts (author_id, region_id, weather_type, category, body, created_at, trusted_helpful_count, helpful_count,
                                   conditions_weather_type, conditions_feels_like, conditions_band, conditions_observed_at)
                VALUES (\(Int(author.id)!), \(region), 'rain', \(category), \(label + " \(i)"), now() - make_interval(mins => \((i * 37) % 300)::int),
                        \((i * 5) % 4), \((i * 5) % 4), \(band == nil ? nil : "rain"), \(feels), \(band), \(band == nil ? nil : Date()))
                RETURNING id
                """
            )
            ids.append(String(try row[0].decode(Int.self, "id")))
        }
        return ids
    }

    /// `ids` in `fit` order for a reader outside in `outside`, from the stored band and hot score.
    static func fitOrder(_ server: TestServer, _ ids: [String], outside: String) async throws -> [String] {
        let bands = ["hot", "warm", "mild", "cool", "chilly", "cold", "veryCold", "freezing"]
        let at = bands.firstIndex(of: outside)!
        var keys: [String: (group: Int, score: Double)] = [:]
        let rows = try await server.dependencies.database.query(
            "SELECT id, conditions_band, hot_score FROM posts WHERE id = ANY(string_to_array(\(ids.joined(separator: ",")), ',')::bigint[])"
        )
        for row in rows {
            var group = 3
            if let band = try row.decode(String?.self, "conditions_band"), let index = bands.firstIndex(of: band) {
                group = band == outside ? 0 : abs(index - at) == 1 ? 1 : 2
            }
            let id = try row.decode(Int.self, "id")
            keys[String(id)] = (group, try row.decode(Double.self, "hot_score"))
        }
        return ids.sorted { a, b in
            let (ka, kb) = (keys[a]!, keys[b]!)
            if ka.group != kb.group { return ka.group < kb.group }
            if ka.score != kb.score { return ka.score > kb.score }
            return Int(a)! > Int(b)!
        }
    }

    /// Walks `path` (with `&cursor=` appended) to its end; `between` runs after each page.
    static func walk(_ server: TestServer, _ path: String, token: String? = nil, items: (CurlResponse) -> [[String: Any]] = { $0.items },
                     cursor next: (CurlResponse) -> String? = { $0.object["nextCursor"] as? String },
                     between: (Int) async throws -> Void = { _ in }) async throws -> [String] {
        var seen: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try await server.json("GET", path + (cursor.map { "&cursor=\($0)" } ?? ""), token: token)
            try #require(page.status == 200, "\(page.text)")
            seen += items(page).compactMap { $0["id"] as? String }
            cursor = next(page)
            pages += 1
            try await between(pages)
        } while cursor != nil && pages < 2_000  // the regions keep the posts of earlier runs of these tests
        return seen
    }

    static let bands: [String?] = ["mild", "cool", "warm", "hot", "freezing", nil, "mild", "chilly", "cool", nil, "mild", "veryCold", "warm", "cold", "hot"]

    @Test("the feed's default: the band outside, its neighbours, the other bands, none; each in hot order; walked across inserts")
    func feedDefault() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.setBody(openMeteoBody(feelsLike: 21.0, weatherCode: 61), for: .openMeteo)  // rain, mild
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let region = try await fitRegions(rig.database, offset: 20, count: 1)[0]
            try await rig.forget([region])
            try await withTestServer(configure: { $0.rateLimitsEnabled = false }, dependencies: rig.dependencies) { server in
                let author = try await server.anonymousAccount()
                let ids = try await Self.seed(server, author: author, region: region, bands: Self.bands)
                let expected = try await Self.fitOrder(server, ids, outside: "mild")
                let seen = try await Self.walk(server, "/v1/feed?regionId=\(region)&regionOnly=true&limit=4", between: { page in
                    // New posts between pages, in the band outside and without conditions, marked and not.
                    _ = try await Self.seed(server, author: author, region: region, bands: [page % 2 == 0 ? "mild" : nil, "cool"], label: "between")
                })
                #expect(Set(seen).count == seen.count, "a post came twice")
                #expect(seen.filter(Set(ids).contains) == expected, "\(seen) vs \(expected)")
                // The same order on GET /v1/posts?sort=fit for the region, and from a member's and a moderator's view.
                let member = try await server.anonymousAccount()
                let moderator = try await server.anonymousAccount()
                try await server.grantRole("moderator", to: moderator)
                for token in [nil, member.token, moderator.token] {
                    let listed = try await Self.walk(server, "/v1/posts?regionId=\(region)&sort=fit&limit=5", token: token)
                    #expect(Set(listed).count == listed.count)
                    #expect(listed.filter(Set(ids).contains) == expected)
                }
                // A block leaves the author out of the blocker's fit list, a member's and a moderator's alike; others
                // still see every post.
                for blocker in [member, moderator] {
                    #expect(try await server.json("POST", "/v1/accounts/me/blocks", token: blocker.token, ["accountId": author.id]).status == 204)
                    let listed = try await Self.walk(server, "/v1/posts?regionId=\(region)&sort=fit&limit=5", token: blocker.token)
                    #expect(listed.filter(Set(ids).contains).isEmpty, "a blocked author's post in a fit list")
                }
                #expect(try await Self.walk(server, "/v1/posts?regionId=\(region)&sort=fit&limit=5").filter(Set(ids).contains) == expected)
            }
        }
    }

    @Test("a fit walk ends in the band it started in, when the weather outside changes between two pages")
    func bandTravelsWithCursor() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.setBody(openMeteoBody(feelsLike: 21.0, weatherCode: 61), for: .openMeteo)
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let region = try await fitRegions(rig.database, offset: 21, count: 1)[0]
            try await rig.forget([region])
            try await withTestServer(configure: { $0.rateLimitsEnabled = false }, dependencies: rig.dependencies) { server in
                let author = try await server.anonymousAccount()
                let ids = try await Self.seed(server, author: author, region: region, bands: Self.bands)
                let seen = try await Self.walk(server, "/v1/feed?regionId=\(region)&regionOnly=true&limit=4", between: { page in
                    guard page == 1 else { return }
                    // A hot afternoon now: a new walk ranks `hot` first, this one goes on in `mild`.
                    fake.setBody(openMeteoBody(feelsLike: 31.0, weatherCode: 61), for: .openMeteo)
                    rig.clock.advance(seconds: 3600)
                })
                // (The region's posts of earlier runs of this test come in the same walks; ours keep their order.)
                let mild = try await Self.fitOrder(server, ids, outside: "mild")
                #expect(seen.filter(Set(ids).contains) == mild)
                let fresh = try await Self.walk(server, "/v1/feed?regionId=\(region)&regionOnly=true&limit=4")
                let hot = try await Self.fitOrder(server, ids, outside: "hot")
                #expect(fresh.filter(Set(ids).contains) == hot && hot != mild)
            }
        }
    }

    @Test("the outfit posts are ranked by fit unless another sort is asked")
    func outfitPosts() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.setBody(openMeteoBody(feelsLike: 5.0, weatherCode: 0), for: .openMeteo)  // veryCold
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let region = try await fitRegions(rig.database, offset: 22, count: 1)[0]
            try await rig.forget([region])
            try await withTestServer(configure: { $0.rateLimitsEnabled = false }, dependencies: rig.dependencies) { server in
                let author = try await server.anonymousAccount()
                let ids = try await Self.seed(server, author: author, region: region, bands: Self.bands, category: "outfit", label: "outfit fit")
                let posts: (CurlResponse) -> [[String: Any]] = { ($0.object["posts"] as? [String: Any])?["items"] as? [[String: Any]] ?? [] }
                let next: (CurlResponse) -> String? = { ($0.object["posts"] as? [String: Any])?["nextCursor"] as? String }
                let seen = try await Self.walk(server, "/v1/regions/\(region)/outfit?limit=6", items: posts, cursor: next)
                #expect(seen.filter(Set(ids).contains) == (try await Self.fitOrder(server, ids, outside: "veryCold")))
                let newest = try await Self.walk(server, "/v1/regions/\(region)/outfit?sort=new&limit=50", items: posts, cursor: next)
                #expect(newest.filter(Set(ids).contains) == ids.sorted { Int($0)! > Int($1)! })
            }
        }
    }

    @Test("fit needs a place on GET /v1/posts; its cursor is its own: another sort's, a forged or malformed one is 400")
    func cursorRules() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.setBody(openMeteoBody(feelsLike: 21.0, weatherCode: 61), for: .openMeteo)
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let region = try await fitRegions(rig.database, offset: 23, count: 1)[0]
            try await rig.forget([region])
            try await withTestServer(configure: { $0.rateLimitsEnabled = false }, dependencies: rig.dependencies) { server in
                let noPlace = try await server.json("GET", "/v1/posts?sort=fit")
                #expect(noPlace.status == 400 && noPlace.errorCode == "bad_request", "\(noPlace.text)")
                #expect(try await server.json("GET", "/v1/posts?sort=fit&regionId=999999999").status == 404)
                let author = try await server.anonymousAccount()
                _ = try await Self.seed(server, author: author, region: region, bands: Self.bands)
                var cursors: [String: String] = [:]
                for sort in ["new", "top", "hot", "fit"] {
                    let page = try await server.json("GET", "/v1/posts?regionId=\(region)&sort=\(sort)&limit=2")
                    cursors[sort] = try #require(page.object["nextCursor"] as? String, "\(page.text)")
                }
                for (from, cursor) in cursors {
                    for to in ["new", "top", "hot", "fit"] where to != from {
                        let answer = try await server.json("GET", "/v1/posts?regionId=\(region)&sort=\(to)&cursor=\(cursor)")
                        #expect(answer.status == 400, "a \(from) cursor sent to \(to) answered \(answer.status)")
                    }
                }
                let score = Int(Double(39_902.5).bitPattern)
                let forged = [
                    PostSortTests.cursor(tag: "f1", keys: [8, 0, score, 5]),  // no ninth band
                    PostSortTests.cursor(tag: "f1", keys: ["-1", "0", String(score), "5"]),
                    PostSortTests.cursor(tag: "f1", keys: [2, 4, score, 5]),  // no fifth group
                    PostSortTests.cursor(tag: "f1", keys: [2, 1, Int(Double.nan.bitPattern), 5]),
                    PostSortTests.cursor(tag: "f1", keys: [2, 1, 0, 5]),
                    PostSortTests.cursor(tag: "f1", keys: [2, 1, score, 0]),
                    PostSortTests.cursor(tag: "f1", keys: [2, 1, score]),
                    PostSortTests.cursor(tag: "f1", keys: ["2", "1", String(score), "99999999999999999999"]),
                    PostSortTests.cursor(tag: "h1", keys: [score, 5]),
                    "garbage", "%00",
                ]
                for cursor in forged {
                    for path in ["/v1/posts?regionId=\(region)&sort=fit", "/v1/feed?regionId=\(region)", "/v1/regions/\(region)/outfit"] {
                        let answer = try await server.json("GET", "\(path)&cursor=\(cursor)".replacingOccurrences(of: "outfit&", with: "outfit?"))
                        #expect(answer.status == 400, "\(path) cursor=\(cursor) answered \(answer.status): \(answer.text)")
                    }
                }
                // A well-formed cursor of any band and group is a position: a page, whatever the weather now.
                let elsewhere = try await server.json("GET", "/v1/posts?regionId=\(region)&sort=fit&cursor=\(PostSortTests.cursor(tag: "f1", keys: [7, 3, score, Int.max]))")
                #expect(elsewhere.status == 200, "\(elsewhere.text)")
            }
        }
    }
}
