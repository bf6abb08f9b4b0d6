import CurlClient
import Database
import Foundation
import Testing

/// `sort=new|top|hot` on `GET /v1/posts` and the feed (CONTRACT §9): each order walked to its end with its cursors
/// while posts are inserted between pages, and the cursor rules.
@Suite("Post sorting")
struct PostSortTests {
    /// Posts with spread trusted marks (set straight on the counter; the marks' own rules are HelpfulMarksTests'),
    /// spread over a few hours of age so `hot` differs from `top`. Returns their ids.
    static func seed(_ server: TestServer, author: TestAccount, count: Int) async throws -> [String] {
        try await server.dependencies.database.query(
            """
            INSERT INTO posts (author_id, region_id, weather_type, category, body, created_at, trusted_helpful_count, helpful_count)
            SELECT \(Int(author.id)!), 1835848, 'snow', 'food', 'sorted ' || i, now() - make_interval(mins => ((i * 37) % 600)::int),
                   (i * 7) % 5 * (i % 3), (i * 7) % 5 * (i % 3) + 1
            FROM generate_series(1, \(count)) AS i RETURNING id
            """
        ).map { String(try $0.decode(Int.self, "id")) }
    }

    /// The score a sort orders by, read from the database (the wire shows no score).
    static func keys(_ server: TestServer, sort: String) async throws -> [String: Double] {
        let column = sort == "top" ? "trusted_helpful_count::float8" : sort == "hot" ? "hot_score" : "id::float8"
        return try await server.dependencies.database.query(SQLQuery(unsafeSQL: "SELECT id, \(column) AS k FROM posts")).reduce(into: [:]) {
            $0[String(try $1.decode(Int.self, "id"))] = try $1.decode(Double.self, "k")
        }
    }

    @Test("every sort walked to its end across inserts between pages: in order, no post twice, none skipped", arguments: ["new", "top", "hot"])
    func walk(sort: String) async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let reader = try await server.anonymousAccount()
            let original = Set(try await Self.seed(server, author: author, count: 20))
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            repeat {
                let path = "/v1/posts?authorId=\(author.id)&sort=\(sort)&limit=3" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await server.json("GET", path, token: reader.token)
                try #require(page.status == 200, "\(page.text)")
                seen += page.items.compactMap { $0["id"] as? String }
                cursor = page.object["nextCursor"] as? String
                pages += 1
                // New posts between pages: newer than every seeded one, with and without marks. They may show up
                // (only `new` never shows them: they are above its cursor), but nothing may repeat or be skipped.
                _ = try await server.dependencies.database.execute(
                    """
                    INSERT INTO posts (author_id, region_id, weather_type, category, body, trusted_helpful_count, helpful_count)
                    VALUES (\(Int(author.id)!), 1835848, 'snow', 'food', 'between', \(pages % 3), \(pages % 3))
                    """
                )
            } while cursor != nil && pages < 100
            #expect(Set(seen).count == seen.count, "a post came twice")
            #expect(original.isSubset(of: Set(seen)), "skipped: \(original.subtracting(seen))")
            let keys = try await Self.keys(server, sort: sort)
            for (a, b) in zip(seen, seen.dropFirst()) {
                let (ka, kb) = (keys[a]!, keys[b]!)
                #expect(ka > kb || (ka == kb && Int(a)! > Int(b)!), "\(sort): \(a) (\(ka)) before \(b) (\(kb))")
            }
        }
    }

    @Test("the feed takes sort, and its cursor follows it")
    func feed() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            // Without a weather provider the feed answers 503; the sort and cursor are checked first.
            let mismatched = try await server.json("GET", "/v1/feed?regionId=1835848&sort=top&cursor=\(Self.cursor(tag: "h1", keys: [4_675_000_000_000_000_000, 5]))")
            #expect(mismatched.status == 400)
            let unknown = try await server.json("GET", "/v1/feed?regionId=1835848&sort=best")
            #expect(unknown.status == 400)
        }
    }

    @Test("the feed ranks its posts by sort=top and pages them with the sort's cursor; sort=new is newest first, the default fit")
    func rankedFeed() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.weatherCode = 61  // rain
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let (home, _) = try await FeedTests().quietRegions(rig.database)
            try await rig.forget([home])
            try await withTestServer(configure: { $0.rateLimitsEnabled = false }, dependencies: rig.dependencies) { server in
                let author = try await server.anonymousAccount()
                let ids = try await server.dependencies.database.query(
                    """
                    INSERT INTO posts (author_id, region_id, weather_type, category, body, trusted_helpful_count)
                    SELECT \(Int(author.id)!), \(home), 'rain', 'food', 'feed ' || i, i % 4 FROM generate_series(1, 9) AS i RETURNING id
                    """
                ).map { try $0.decode(Int.self, "id") }
                let keys = try await Self.keys(server, sort: "top")
                let expected = ids.sorted { (keys[String($0)]!, $0) > (keys[String($1)]!, $1) }.map(String.init)
                var seen: [String] = []
                var cursor: String?
                repeat {
                    let page = try await server.json("GET", "/v1/feed?regionId=\(home)&regionOnly=true&sort=top&limit=4" + (cursor.map { "&cursor=\($0)" } ?? ""))
                    try #require(page.status == 200, "\(page.text)")
                    seen += page.items.compactMap { $0["id"] as? String }
                    cursor = page.object["nextCursor"] as? String
                } while cursor != nil
                // The region's rain posts of other suites come in the same walk; ours keep their order among them.
                let ours = Set(expected)
                #expect(seen.filter(ours.contains) == expected)
                #expect(Set(seen).count == seen.count)
                let newest = try await server.json("GET", "/v1/feed?regionId=\(home)&regionOnly=true&sort=new&limit=100")
                #expect(newest.items.compactMap { $0["id"] as? String }.filter(ours.contains) == ids.sorted(by: >).map(String.init))
                // The default is `fit`: posts without conditions (all of these) come in `hot` order (FitSortTests).
                let hot = try await Self.keys(server, sort: "hot")
                let fit = try await server.json("GET", "/v1/feed?regionId=\(home)&regionOnly=true&limit=100")
                #expect(fit.items.compactMap { $0["id"] as? String }.filter(ours.contains) == ids.sorted { (hot[String($0)]!, $0) > (hot[String($1)]!, $1) }.map(String.init))
            }
        }
    }

    static func cursor(tag: String?, keys: [String]) -> String {
        let text = (tag.map { [$0] } ?? []) + keys
        return Data(text.joined(separator: ":").utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func cursor(tag: String?, keys: [Int]) -> String { cursor(tag: tag, keys: keys.map(String.init)) }

    @Test("a cursor of another sort, a forged or malformed one is 400, never a 500 nor a page")
    func cursorRules() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            _ = try await Self.seed(server, author: author, count: 6)
            var cursors: [String: String] = [:]
            for sort in ["new", "top", "hot"] {
                let page = try await server.json("GET", "/v1/posts?authorId=\(author.id)&sort=\(sort)&limit=2")
                cursors[sort] = try #require(page.object["nextCursor"] as? String)
                // Its own cursor is accepted.
                #expect(try await server.json("GET", "/v1/posts?sort=\(sort)&cursor=\(cursors[sort]!)").status == 200)
            }
            // Every cursor sent to every other sort (`new` is the default when sort is absent).
            for (from, cursor) in cursors {
                for to in ["new", "top", "hot"] where to != from {
                    let answer = try await server.json("GET", "/v1/posts?sort=\(to)&cursor=\(cursor)")
                    #expect(answer.status == 400, "a \(from) cursor sent to \(to) answered \(answer.status)")
                    #expect(answer.errorCode == "bad_request")
                }
            }
            #expect(try await server.json("GET", "/v1/posts?cursor=\(cursors["hot"]!)").status == 400)
            let forged = [
                Self.cursor(tag: "h1", keys: [Int(Double.nan.bitPattern), 5]),
                Self.cursor(tag: "h1", keys: [Int(Double.infinity.bitPattern), 5]),
                Self.cursor(tag: "h1", keys: [0, 5]),  // a zero score
                Self.cursor(tag: "h1", keys: ["1", "2", "3"]),
                Self.cursor(tag: "h1", keys: ["-1", "5"]),
                Self.cursor(tag: "t1", keys: ["99999999999999999999", "5"]),  // past Int64
                Self.cursor(tag: "t1", keys: [3, 0]),
                Self.cursor(tag: "t1", keys: ["03", "5"]),
                Self.cursor(tag: "x1", keys: [3, 5]),
                Self.cursor(tag: "t1", keys: [3]),
                "garbage", "%00", "dDE6MzoO",
            ]
            for sort in ["top", "hot"] {
                for cursor in forged {
                    let answer = try await server.json("GET", "/v1/posts?sort=\(sort)&cursor=\(cursor)")
                    #expect(answer.status == 400, "sort=\(sort) cursor=\(cursor) answered \(answer.status): \(answer.text)")
                }
            }
            // A huge but well-formed count is a position, not an overflow.
            let huge = try await server.json("GET", "/v1/posts?sort=top&cursor=\(Self.cursor(tag: "t1", keys: [Int.max, 5]))")
            #expect(huge.status == 200, "\(huge.text)")
            #expect(try await server.json("GET", "/v1/posts?sort=fresh").status == 400)
            #expect(try await server.json("GET", "/v1/posts?sort=").status == 400)
        }
    }
}
