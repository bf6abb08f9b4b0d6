import Database
import Foundation
import Testing
import Weather

@Suite("Outfit guide (CONTRACT §9)")
struct OutfitTests {
    @Test("GET /v1/outfit-bands lists the eight bands, localized, in the list envelope")
    func bands() async throws {
        try await withTestServer { server in
            let ko = try await server.json("GET", "/v1/outfit-bands")
            #expect(ko.status == 200)
            #expect(ko.object.keys.contains("nextCursor") && ko.object["nextCursor"] is NSNull)
            #expect(ko.items.compactMap { $0["id"] as? String } == ["hot", "warm", "mild", "cool", "chilly", "cold", "veryCold", "freezing"])
            #expect(ko.items[0]["items"] as? [String] == ["민소매", "반팔", "반바지", "린넨 옷"])
            #expect(ko.items[0]["minFeelsLike"] as? Double == 28 && ko.items[0]["maxFeelsLike"] is NSNull)
            #expect(ko.items[7]["minFeelsLike"] is NSNull && ko.items[7]["maxFeelsLike"] as? Double == 5)
            #expect(ko.items[1]["minFeelsLike"] as? Double == 23 && ko.items[1]["maxFeelsLike"] as? Double == 28)
            let en = try await server.json("GET", "/v1/outfit-bands", headers: [("Accept-Language", "en-US,en;q=0.9")])
            #expect(en.items[7]["items"] as? [String] == ["padded coat", "heavy coat", "scarf", "fleece"])
            #expect(en.items[7]["name"] as? String == "Freezing")
        }
    }

    @Test("a region's outfit: its weather, the band of its feels-like (°C whatever the units), what to carry, and outfit posts")
    func regionOutfit() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.setBody(openMeteoBody(feelsLike: 28.0, weatherCode: 61, uvIndex: 6.0), for: .openMeteo)
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let regions = try await fitRegions(rig.database, offset: 10, count: 2)
            let (hot, freezing) = (regions[0], regions[1])
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                let author = try await server.anonymousAccount()
                let outfitPosts = try await (0..<3).asyncMap { i in
                    try #require(try await server.createPost(author, category: "outfit", body: "outfit \(i)", regionId: String(hot))["id"] as? String)
                }
                let food = try #require(try await server.createPost(author, category: "food", regionId: String(hot))["id"] as? String)

                let guide = try await server.json("GET", "/v1/regions/\(hot)/outfit?limit=2", headers: [("Accept-Language", "en")])
                #expect(guide.status == 200, "\(guide.text)")
                let band = try #require(guide.object["band"] as? [String: Any])
                #expect(band["id"] as? String == "hot" && band["name"] as? String == "Hot")
                #expect(band["items"] as? [String] == ["sleeveless top", "T-shirt", "shorts", "linen"])
                #expect(band["minFeelsLike"] as? Double == 28 && band["maxFeelsLike"] is NSNull)
                let carry = try #require(guide.object["carry"] as? [[String: Any]])
                #expect(carry.compactMap { $0["id"] as? String } == ["umbrella", "sunscreen", "hat", "water"])
                #expect(carry.first?["name"] as? String == "Umbrella")
                #expect((guide.object["region"] as? [String: Any])?["id"] as? String == String(hot))
                #expect((guide.object["currentWeather"] as? [String: Any])?["feelsLike"] as? Double == 28)
                // Outfit posts only (from every region: other tests' too), ranked by fit, paged by cursor.
                let all = try await server.json("GET", "/v1/regions/\(hot)/outfit?limit=100")
                let items = try #require((all.object["posts"] as? [String: Any])?["items"] as? [[String: Any]])
                #expect(items.allSatisfy { $0["category"] as? String == "outfit" })
                let mine = items.filter { ($0["author"] as? [String: Any])?["id"] as? String == author.id }.compactMap { $0["id"] as? String }
                #expect(mine == outfitPosts.reversed())
                #expect(!mine.contains(food))
                #expect(try #require((guide.object["posts"] as? [String: Any])?["items"] as? [[String: Any]]).count == 2)
                // Paged newest first with sort=new (the default order, fit, is FitSortTests').
                let newest = try await server.json("GET", "/v1/regions/\(hot)/outfit?limit=2&sort=new")
                let posts = try #require(newest.object["posts"] as? [String: Any])
                let first = try #require(posts["items"] as? [[String: Any]]).compactMap { $0["id"] as? String }
                #expect(first.count == 2)
                let cursor = try #require(posts["nextCursor"] as? String)
                let rest = try await server.json("GET", "/v1/regions/\(hot)/outfit?limit=2&sort=new&cursor=\(cursor)")
                let restIDs = ((rest.object["posts"] as? [String: Any])?["items"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
                #expect(!restIDs.isEmpty && Set(restIDs).isDisjoint(with: first))
                #expect(restIDs.compactMap { Int($0) }.allSatisfy { $0 < first.compactMap { Int($0) }.min()! })

                // Imperial: the weather in °F, the band and its bounds still in °C.
                let imperial = try await server.json("GET", "/v1/regions/\(hot)/outfit?units=imperial")
                #expect((imperial.object["currentWeather"] as? [String: Any])?["feelsLike"] as? Double == 82.4)
                #expect((imperial.object["band"] as? [String: Any])?["id"] as? String == "hot")
                #expect((imperial.object["band"] as? [String: Any])?["minFeelsLike"] as? Double == 28)

                // 4.9 °C: freezing (gloves), clear and low UV: nothing else to carry. By coordinates too.
                fake.setBody(openMeteoBody(feelsLike: 4.9, weatherCode: 0, uvIndex: 2.9), for: .openMeteo)
                let cold = try await server.json("GET", "/v1/regions/\(freezing)/outfit?units=imperial", headers: [("Accept-Language", "ko")])
                #expect(cold.status == 200, "\(cold.text)")
                #expect((cold.object["currentWeather"] as? [String: Any])?["feelsLike"] as? Double == 40.8)
                #expect((cold.object["band"] as? [String: Any])?["id"] as? String == "freezing")
                #expect((cold.object["band"] as? [String: Any])?["name"] as? String == "매우 추움")
                #expect((cold.object["carry"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == ["gloves"])
                let point = try await rig.database.query("SELECT lat, lon FROM regions WHERE id = \(freezing)")[0]
                let near = try await server.json("GET", "/v1/outfit?lat=\(try point.decode(Double.self, "lat"))&lon=\(try point.decode(Double.self, "lon"))")
                #expect(near.status == 200, "\(near.text)")
                #expect((near.object["region"] as? [String: Any])?["id"] as? String == String(freezing))
                #expect((near.object["band"] as? [String: Any])?["id"] as? String == "freezing")
                #expect(fake.callCount == 2)

                for bad in ["?lat=100&lon=0", "?lat=abc&lon=1", "?lat=1", "", "?lat=1&lon=1&units=kelvin"] {
                    #expect(try await server.json("GET", "/v1/outfit\(bad)").status == 400, "\(bad)")
                }
                #expect(try await server.json("GET", "/v1/regions/\(hot)/outfit?limit=0").status == 400)
                #expect(try await server.json("GET", "/v1/regions/\(hot)/outfit?cursor=nonsense").status == 400)
                #expect(try await server.json("GET", "/v1/regions/999999999/outfit").status == 404)
                #expect(try await server.json("GET", "/v1/regions/abc/outfit").status == 404)
            }
        }
    }

    @Test("with no weather to be had, the outfit guide is 503 weather_unavailable")
    func noWeather() async throws {
        try await withTestServer { server in  // WEATHER_PROVIDER=none
            let region = try await fitRegions(server.dependencies.database, offset: 12, count: 1)[0]
            let response = try await server.json("GET", "/v1/regions/\(region)/outfit")
            #expect(response.status == 503)
            #expect(response.errorCode == "weather_unavailable")
            #expect(try await server.json("GET", "/v1/regions/999999999/outfit").status == 404)
        }
    }
}

extension Sequence {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
