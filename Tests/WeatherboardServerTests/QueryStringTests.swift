import Foundation
import Testing

@testable import WeatherboardServer

/// CONTRACT §1: query strings decode as HTML forms encode them, in every parameter of every route: `+` is a space,
/// `%2B` a plus. Over HTTP, with the bytes a form or Python's `urlencode` sends.
@Suite("Query strings")
struct QueryStringTests {
    @Test("formDecoded: + is a space, %2B a plus, in names and values; a stray % stays; bytes that are not UTF-8 read as U+FFFD")
    func decoding() {
        let pairs = QueryInput.formDecoded("q=coffee+%EC%BB%A4%ED%94%BC&plus=a%2Bb&region%49d=1+2&empty=&bare&&pct=100%&bad=%zz%4&nonutf8=%FF")
        #expect(pairs.map(\.name) == ["q", "plus", "regionId", "empty", "bare", "pct", "bad", "nonutf8"])
        #expect(pairs.map(\.value) == ["coffee 커피", "a+b", "1 2", "", "", "100%", "%zz%4", "\u{FFFD}"])
        // A repeated name: its first value counts.
        #expect(QueryInput(query: "sort=top&sort=new").get("sort") == "top")
        #expect(QueryInput(query: nil).values.isEmpty)
    }

    @Test("search: + between terms is a space (two terms), %2B is a plus (one term with a plus in it)")
    func searchTerms() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await SearchTests.region(server)
            let author = try await server.anonymousAccount()
            let both = try await SearchTests.post(server, author, region: region, "아침엔 coffee, 오후엔 다시 커피")
            let plus = try await SearchTests.post(server, author, region: region, "a+b 공식을 외워요")
            let spaced = try await SearchTests.post(server, author, region: region, "a b 공식을 외워요")
            let cases: [(String, Set<String>)] = [
                ("coffee+%EC%BB%A4%ED%94%BC", [both]),  // coffee 커피: two terms, both in the post
                ("coffee%20%EC%BB%A4%ED%94%BC", [both]),
                ("a%2Bb", [plus]),  // one term, "a+b"
                ("a+b", [plus, spaced]),  // two terms, "a" and "b"
                ("%EA%B3%B5%EC%8B%9D+a%2Bb", [plus]),  // 공식 and a+b
            ]
            for sort in ["new", "top", "hot"] {
                for (q, expected) in cases {
                    let page = try await server.json("GET", "/v1/posts?regionId=\(region)&sort=\(sort)&limit=100&q=\(q)")
                    try #require(page.status == 200, "q=\(q): \(page.status) \(page.text)")
                    #expect(Set(page.items.compactMap { $0["id"] as? String }) == expected, "sort=\(sort)&q=\(q)")
                }
            }
        }
    }

    @Test("another parameter with + reads as it does with a space: 400 for a bad value, never a 500; a good one still works")
    func otherParameters() async throws {
        try await RegionTestCatalog.loaded.value
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let account = try await server.anonymousAccount()
            _ = try await server.createPost(account, body: "plus and space")
            _ = try await server.createPost(account, body: "plus and space, again")
            for query in ["regionId=1835848+", "regionId=+1835848", "regionId=1835+848", "weatherType=rain+", "weatherType=+rain",
                          "category=food+", "authorId=\(account.id)+", "limit=+5", "limit=5+", "sort=new+", "cursor=+",
                          "include=weather+x", "q=a+%00", "q=%00+a"]
            {
                let plus = try await server.json("GET", "/v1/posts?\(query)")
                let space = try await server.json("GET", "/v1/posts?\(query.replacingOccurrences(of: "+", with: "%20"))")
                #expect(plus.status == 400 && plus.errorCode == "bad_request", "?\(query) answered \(plus.status)")
                #expect(plus.status == space.status && plus.errorMessage == space.errorMessage, "?\(query): \(plus.text) \(space.text)")
            }
            for query in ["regionId=1835848+", "regionId=1835848&limit=+5", "lat=+37.5&lon=127", "regionId=1835848&sort=fit+"] {
                let plus = try await server.json("GET", "/v1/feed?\(query)")
                let space = try await server.json("GET", "/v1/feed?\(query.replacingOccurrences(of: "+", with: "%20"))")
                #expect((400..<500).contains(plus.status), "/v1/feed?\(query) answered \(plus.status)")
                #expect(plus.status == space.status && plus.errorMessage == space.errorMessage, "/v1/feed?\(query): \(plus.text) \(space.text)")
            }
            // A `+` (a space) around a list value is what `include=` already allows around commas.
            #expect(try await server.json("GET", "/v1/posts?include=weather,+weather&limit=1").status == 200)
            // A page's cursor is base64url (no `+`, `/` or `=`), so it goes back as it came.
            let first = try await server.json("GET", "/v1/posts?limit=1")
            let cursor = try #require(first.object["nextCursor"] as? String)
            #expect(!cursor.contains("+") && cursor.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) == cursor)
            #expect(try await server.json("GET", "/v1/posts?limit=1&cursor=\(cursor)").status == 200)
            #expect(try await server.json("GET", "/v1/posts?limit=1&cursor=\(cursor)+").status == 400)
            // Another route: the region search reads `q` the same way.
            let regions = try await server.json("GET", "/v1/regions?q=sao+paulo", headers: [("Accept-Language", "en")])
            #expect(regions.status == 200)
            #expect(regions.items.first?["name"] as? String == "São Paulo", "\(regions.text)")
            #expect(try await server.json("GET", "/v1/regions/nearest?lat=+37.5&lon=127").status == 400)
            #expect(try await server.json("GET", "/v1/regions/nearest?lat=%2B37.5&lon=127").status == 200)
        }
    }
}
