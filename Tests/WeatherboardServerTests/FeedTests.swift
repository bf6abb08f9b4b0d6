import Database
import Foundation
import Testing
import Weather

@Suite("Feed and include=weather")
struct FeedTests {
    /// Two Korean regions no other test asks the weather of, so the shared cache can't disagree with the fake.
    func quietRegions(_ database: PostgresPool) async throws -> (Int, Int) {
        try await RegionTestCatalog.loaded.value
        let rows = try await database.query(
            """
            SELECT id FROM regions WHERE country_code = 'KR'
              AND id NOT IN (1833747, 1835235, 1835329, 1835553, 1835848, 1838524, 1841811, 1843564, 1846266, 1850147)
            ORDER BY population DESC LIMIT 2
            """
        )
        return (try rows[0].decode(Int.self, "id"), try rows[1].decode(Int.self, "id"))
    }

    @Test("the feed returns only posts of the region's current weather type, from every region or the region's own")
    func feed() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.weatherCode = 61  // rain
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let (home, away) = try await quietRegions(rig.database)
            try await rig.forget([home, away])
            try await withTestServer(dependencies: rig.dependencies) { server in
                let author = try await server.anonymousAccount()
                let rainHome = try #require(try await server.createPost(author, weatherType: "rain", body: "home rain", regionId: String(home))["id"] as? String)
                let rainAway = try #require(try await server.createPost(author, weatherType: "rain", body: "away rain", regionId: String(away))["id"] as? String)
                let snowHome = try #require(try await server.createPost(author, weatherType: "snow", body: "home snow", regionId: String(home))["id"] as? String)

                let feed = try await server.json("GET", "/v1/feed?regionId=\(home)&limit=100")
                #expect(feed.status == 200, "\(feed.text)")
                #expect((feed.object["region"] as? [String: Any])?["id"] as? String == String(home))
                let weather = try #require(feed.object["currentWeather"] as? [String: Any])
                #expect(weather["weatherType"] as? String == "rain")
                let ids = feed.items.compactMap { $0["id"] as? String }
                #expect(ids.contains(rainHome) && ids.contains(rainAway))
                #expect(!ids.contains(snowHome))
                #expect(feed.items.allSatisfy { $0["weatherType"] as? String == "rain" })
                #expect(feed.object.keys.contains("nextCursor"))

                let own = try await server.json("GET", "/v1/feed?regionId=\(home)&regionOnly=true&limit=100")
                let ownIDs = own.items.compactMap { $0["id"] as? String }
                #expect(ownIDs.contains(rainHome) && !ownIDs.contains(rainAway))

                // Coordinates snap to the nearest region.
                let point = try await rig.database.query("SELECT lat, lon FROM regions WHERE id = \(home)")[0]
                let lat = try point.decode(Double.self, "lat")
                let lon = try point.decode(Double.self, "lon")
                let near = try await server.json("GET", "/v1/feed?lat=\(lat)&lon=\(lon)&regionOnly=true")
                #expect((near.object["region"] as? [String: Any])?["id"] as? String == String(home))

                // include=weather attaches each region's weather to the posts of a list.
                let list = try await server.json("GET", "/v1/posts?authorId=\(author.id)&include=weather&units=imperial")
                #expect(list.status == 200)
                let attached = list.items.compactMap { ($0["region"] as? [String: Any])?["currentWeather"] as? [String: Any] }
                #expect(attached.count == 3)
                #expect(attached.allSatisfy { $0["units"] as? String == "imperial" })
                let plain = try await server.json("GET", "/v1/posts?authorId=\(author.id)")
                #expect(plain.items.allSatisfy { ($0["region"] as? [String: Any])?.keys.contains("currentWeather") == false })

                for bad in ["", "?regionId=\(home)&regionOnly=maybe", "?lat=100&lon=0", "?lat=abc&lon=1", "?regionId=\(home)&units=kelvin", "?regionId=\(home)&include=everything"] {
                    let response = try await server.json("GET", "/v1/feed\(bad)")
                    #expect(response.status == 400, "\(bad): \(response.status)")
                }
                #expect(try await server.json("GET", "/v1/feed?regionId=999999999").status == 404)
                #expect(try await server.json("GET", "/v1/feed?regionId=abc").status == 404)
            }
        }
    }

    @Test("with no weather to be had, the feed is 503 weather_unavailable and lists still work")
    func noWeather() async throws {
        try await withTestServer { server in  // WEATHER_PROVIDER=none
            let (home, _) = try await quietRegions(server.dependencies.database)
            let feed = try await server.json("GET", "/v1/feed?regionId=\(home)")
            #expect(feed.status == 503)
            #expect(feed.errorCode == "weather_unavailable")
            let account = try await server.anonymousAccount()
            _ = try await server.createPost(account, regionId: String(home))
            let list = try await server.json("GET", "/v1/posts?authorId=\(account.id)&include=weather")
            #expect(list.status == 200)
            let region = try #require(list.items.first?["region"] as? [String: Any])
            #expect(region.keys.contains("currentWeather") && region["currentWeather"] is NSNull)
        }
    }
}
