import Foundation
import Testing

/// CONTRACT §6 regions, against the bundled catalog in PostgreSQL.
@Suite struct RegionsTests {
    static let seoul = "1835848"
    static let busan = "1838524"
    static let jeju = "1846266"

    func firstItem(_ server: TestServer, _ path: String, language: String = "ko") async throws -> [String: Any] {
        let response = try await server.json("GET", path, headers: [("Accept-Language", language)])
        #expect(response.status == 200, "\(path): \(response.text)")
        let items = response.object["items"] as? [[String: Any]] ?? []
        #expect(!items.isEmpty, "\(path) found nothing")
        return items.first ?? [:]
    }

    @Test func searchKoreanAndEnglish() async throws {
        try await RegionTestCatalog.loaded.value
        try await withTestServer { server in
            for (q, id) in [("%EC%84%9C%EC%9A%B8", Self.seoul), ("seoul", Self.seoul), ("Seo", Self.seoul), ("SEOUL", Self.seoul),
                            ("%EB%B6%80%EC%82%B0", Self.busan), ("busan", Self.busan), ("jeju", Self.jeju), ("%EC%A0%9C%EC%A3%BC", Self.jeju)] {
                let first = try await firstItem(server, "/v1/regions?q=\(q)")
                #expect(first["id"] as? String == id, "q=\(q) → \(first)")
            }
            let korean = try await firstItem(server, "/v1/regions?q=seoul")
            #expect(korean["name"] as? String == "서울")
            #expect((korean["names"] as? [String: Any])?["en"] as? String == "Seoul")
            #expect(korean["countryCode"] as? String == "KR")
            #expect(korean["timezone"] as? String == "Asia/Seoul")
            let english = try await firstItem(server, "/v1/regions?q=%EC%84%9C%EC%9A%B8", language: "en-US,en;q=0.9")
            #expect(english["name"] as? String == "Seoul")
            // Accent-insensitive: "sao paulo" finds São Paulo.
            let saoPaulo = try await firstItem(server, "/v1/regions?q=sao%20paulo", language: "en")
            #expect(saoPaulo["name"] as? String == "São Paulo")
            let none = try await server.json("GET", "/v1/regions?q=zzqqxxnotaplace")
            #expect(none.status == 200)
            #expect((none.object["items"] as? [Any])?.isEmpty == true)
            #expect(none.object["nextCursor"] is NSNull)
        }
    }

    @Test func searchIsMostPopulousFirstAndPaginates() async throws {
        try await RegionTestCatalog.loaded.value
        try await withTestServer { server in
            var seen: [String] = []
            var cursor: String?
            var populations: [String] = []
            for _ in 0..<3 {
                let path = "/v1/regions?q=san&limit=7" + (cursor.map { "&cursor=\($0)" } ?? "")
                let response = try await server.json("GET", path, headers: [("Accept-Language", "en")])
                #expect(response.status == 200)
                let items = response.object["items"] as? [[String: Any]] ?? []
                #expect(items.count == 7)
                seen += items.compactMap { $0["id"] as? String }
                populations += items.compactMap { $0["name"] as? String }
                cursor = response.object["nextCursor"] as? String
                #expect(cursor != nil)
            }
            #expect(Set(seen).count == 21, "pages overlap: \(populations)")
            // Empty q lists the most populous regions.
            let all = try await server.json("GET", "/v1/regions?limit=1000")
            #expect(all.status == 200)
            #expect((all.object["items"] as? [Any])?.count == 100)
        }
    }

    @Test func badListParameters() async throws {
        try await RegionTestCatalog.loaded.value
        try await withTestServer { server in
            for path in ["/v1/regions?q=seoul&limit=abc", "/v1/regions?limit=0", "/v1/regions?q=seoul&cursor=garbage!!", "/v1/regions?cursor=Z2FyYmFnZQ"] {
                let response = try await server.json("GET", path)
                #expect(response.status == 400, "\(path)")
                #expect(response.errorCode == "bad_request")
            }
        }
    }

    @Test("q's 100 are code points, as the spec's maxLength counts them: 51 × a + U+0301 (51 characters, 102 code points) is 400")
    func queryLengthCountsCodePoints() async throws {
        try await RegionTestCatalog.loaded.value
        try await withTestServer { server in
            let over = try await server.json("GET", "/v1/regions?q=" + String(repeating: "a%CC%81", count: 51))
            #expect(over.status == 400)
            #expect(over.errorCode == "bad_request")
            let atLimit = try await server.json("GET", "/v1/regions?q=" + String(repeating: "a%CC%81", count: 50))
            #expect(atLimit.status == 200)
        }
    }

    @Test func nearest() async throws {
        try await RegionTestCatalog.loaded.value
        try await withTestServer { server in
            let cityHall = try await server.json("GET", "/v1/regions/nearest?lat=37.5663&lon=126.9779")
            #expect(cityHall.status == 200)
            #expect(cityHall.object["id"] as? String == Self.seoul)
            #expect(cityHall.object["name"] as? String == "서울")
            let busan = try await server.json("GET", "/v1/regions/nearest?lat=35.1028&lon=129.0403", headers: [("Accept-Language", "en")])
            #expect(busan.object["id"] as? String == Self.busan)
            #expect(busan.object["name"] as? String == "Busan")
            let paris = try await server.json("GET", "/v1/regions/nearest?lat=48.8566&lon=2.3522")
            #expect(paris.object["countryCode"] as? String == "FR")
            for path in ["/v1/regions/nearest?lat=91&lon=0", "/v1/regions/nearest?lat=abc&lon=1", "/v1/regions/nearest?lat=37",
                         "/v1/regions/nearest", "/v1/regions/nearest?lat=10&lon=181", "/v1/regions/nearest?lat=nan&lon=1"] {
                let response = try await server.json("GET", path)
                #expect(response.status == 400, "\(path)")
                #expect(response.errorCode == "bad_request")
            }
        }
    }

    @Test("coordinates too close to zero for PostgreSQL's float arithmetic (subnormal doubles) are zero, never a 500")
    func subnormalCoordinates() async throws {
        try await RegionTestCatalog.loaded.value
        try await withTestServer { server in
            let origin = try await server.json("GET", "/v1/regions/nearest?lat=0&lon=10")
            #expect(origin.status == 200)
            let expected = try #require(origin.object["id"] as? String)
            for (lat, lon) in [("4.9e-324", "10"), ("-4.9e-324", "10"), ("0", "10.0000000000"), ("2.2250738585072014e-308", "10")] {
                let nearest = try await server.json("GET", "/v1/regions/nearest?lat=\(lat)&lon=\(lon)")
                #expect(nearest.status == 200, "\(lat),\(lon): \(nearest.text)")
                #expect(nearest.object["id"] as? String == expected)
                let feed = try await server.json("GET", "/v1/feed?lat=\(lat)&lon=\(lon)")
                // This server has no weather provider: the feed's answer is that, not a database error.
                #expect(feed.status == 503 && feed.errorCode == "weather_unavailable", "\(feed.text)")
            }
            let tiny = try await server.json("GET", "/v1/regions/nearest?lat=-5e-324&lon=-5e-324")
            #expect(tiny.status == 200, "\(tiny.text)")
            let author = try await server.anonymousAccount()
            let created = try await server.json(
                "POST", "/v1/posts", token: author.token,
                ["weatherType": "clearSky", "category": "place", "body": "적도 근처", "location": ["lat": Double.leastNonzeroMagnitude, "lon": 10]]
            )
            #expect(created.status == 201, "\(created.text)")
            #expect((created.object["region"] as? [String: Any])?["id"] as? String == expected)
        }
    }

    @Test func showRegion() async throws {
        try await RegionTestCatalog.loaded.value
        try await withTestServer { server in
            let response = try await server.json("GET", "/v1/regions/\(Self.jeju)")
            #expect(response.status == 200)
            let object = response.object
            #expect(object["id"] as? String == Self.jeju)
            #expect(object["name"] as? String == "제주")
            #expect(object["names"] as? [String: String] == ["ko": "제주", "en": "Jeju City"])
            #expect((object["lat"] as? Double).map { abs($0 - 33.50972) < 0.001 } == true)
            #expect(Set(object.keys) == ["id", "name", "names", "countryCode", "lat", "lon", "timezone"])
            for path in ["/v1/regions/999999999", "/v1/regions/abc", "/v1/regions/-1", "/v1/regions/1e5", "/v1/regions/99999999999999999999999"] {
                let missing = try await server.json("GET", path)
                #expect(missing.status == 404, "\(path)")
                #expect(missing.errorCode == "not_found")
            }
        }
    }
}
