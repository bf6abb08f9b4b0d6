import Board
import Database
import Foundation
import Testing
import Weather
import WeatherboardServer

/// An open-meteo answer with the given feels-like (°C), WMO weather code and UV index.
func openMeteoBody(feelsLike: Double, weatherCode: Int = 61, uvIndex: Double = 1.25) -> String {
    """
    {"latitude":37.55,"longitude":127.0,"generationtime_ms":0.06,"utc_offset_seconds":32400,"timezone":"Asia/Seoul",
     "timezone_abbreviation":"KST","elevation":38.0,
     "current_units":{"time":"iso8601","interval":"seconds","temperature_2m":"°C","wind_speed_10m":"m/s"},
     "current":{"time":"2026-11-22T18:30","interval":900,"temperature_2m":\(feelsLike + 1),"relative_humidity_2m":61,
     "apparent_temperature":\(feelsLike),"weather_code":\(weatherCode),"cloud_cover":100,"pressure_msl":1021.7,"wind_speed_10m":5.0,"uv_index":\(uvIndex)}}
    """
}

/// Japanese towns that only the fit tests ask the weather of (the other weather tests take Korean regions; `offset`
/// keeps each fit test's apart), so the shared weather cache cannot disagree with the fake.
func fitRegions(_ database: PostgresPool, offset: Int, count: Int = 2) async throws -> [Int] {
    try await RegionTestCatalog.loaded.value
    let rows = try await database.query(
        "SELECT id FROM regions WHERE country_code = 'JP' ORDER BY population, id OFFSET \(100 + offset) LIMIT \(count)"
    )
    return try rows.map { try $0.decode(Int.self, "id") }
}

@Suite("Conditions recorded at create (CONTRACT §9)")
struct ConditionsTests {
    @Test("a fresh cache gives the conditions without an upstream call; lists and reads show them; an edit keeps them")
    func fromFreshCache() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.setBody(openMeteoBody(feelsLike: 27.9, weatherCode: 61), for: .openMeteo)
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let region = try await fitRegions(rig.database, offset: 0, count: 1)[0]
            try await rig.forget([region])
            try await withTestServer(dependencies: rig.dependencies) { server in
                let warm = try await server.json("GET", "/v1/regions/\(region)/weather")
                #expect(warm.status == 200, "\(warm.text)")
                #expect(fake.callCount == 1)
                let author = try await server.anonymousAccount()
                let created = try await server.createPost(author, weatherType: "snow", category: "outfit", regionId: String(region))
                #expect(fake.callCount == 1, "a fresh region must not be asked again")
                let conditions = try #require(created["conditions"] as? [String: Any], "\(created)")
                #expect(conditions["weatherType"] as? String == "rain")
                #expect(conditions["feelsLike"] as? Double == 27.9)
                #expect(conditions["band"] as? String == "warm")
                #expect(conditions["observedAt"] as? String == "2026-11-22T09:30:00Z")
                let id = try #require(created["id"] as? String)

                let list = try await server.json("GET", "/v1/posts?authorId=\(author.id)&units=imperial")
                let listed = try #require(list.items.first?["conditions"] as? [String: Any])
                #expect(listed["feelsLike"] as? Double == 27.9, "°C whatever the units")
                #expect(listed["band"] as? String == "warm")

                // The weather changes; an edit keeps the conditions of the create.
                fake.setBody(openMeteoBody(feelsLike: 2, weatherCode: 0), for: .openMeteo)
                rig.clock.advance(seconds: 3600)
                let edited = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, ["body": "edited", "weatherType": "clearSky"])
                #expect(edited.status == 200, "\(edited.text)")
                let after = try #require(edited.object["conditions"] as? [String: Any])
                #expect(after["feelsLike"] as? Double == 27.9 && after["band"] as? String == "warm" && after["weatherType"] as? String == "rain")
                let shown = try await server.json("GET", "/v1/posts/\(id)")
                #expect((shown.object["conditions"] as? [String: Any])?["band"] as? String == "warm")
                #expect(fake.callCount == 1, "an edit asks no weather")
            }
        }
    }

    @Test("a cold region costs exactly one upstream call, and the band edge 28.0 is hot")
    func coldRegion() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.setBody(openMeteoBody(feelsLike: 28.0, weatherCode: 0), for: .openMeteo)
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let region = try await fitRegions(rig.database, offset: 2, count: 1)[0]
            try await rig.forget([region])
            try await withTestServer(dependencies: rig.dependencies) { server in
                let author = try await server.anonymousAccount()
                let created = try await server.createPost(author, regionId: String(region))
                let conditions = try #require(created["conditions"] as? [String: Any], "\(created)")
                #expect(conditions["band"] as? String == "hot")
                #expect(conditions["feelsLike"] as? Double == 28)
                #expect(conditions["weatherType"] as? String == "clearSky")
                #expect(fake.callCount == 1)
                #expect(rig.events.count(.upstreamCall(regionID: region)) == 1)
                // The next create in that region reads the cache.
                _ = try await server.createPost(author, regionId: String(region))
                #expect(fake.callCount == 1)
                let stored = try await rig.database.query(
                    "SELECT conditions_feels_like::text AS f, conditions_band AS b FROM posts WHERE author_id = \(Int(author.id)!)"
                )
                #expect(try stored.map { try $0.decode(String.self, "f") } == ["28.0", "28.0"])
                #expect(try stored.map { try $0.decode(String.self, "b") } == ["hot", "hot"])
            }
        }
    }

    @Test("when the provider fails the post is created with conditions null")
    func providerFails() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.mode = .status(500)
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let region = try await fitRegions(rig.database, offset: 4, count: 1)[0]
            try await rig.forget([region])
            try await withTestServer(dependencies: rig.dependencies) { server in
                let author = try await server.anonymousAccount()
                let created = try await server.json(
                    "POST", "/v1/posts", token: author.token, ["weatherType": "rain", "category": "food", "body": "x", "regionId": String(region)]
                )
                #expect(created.status == 201, "\(created.text)")
                #expect(created.object.keys.contains("conditions") && created.object["conditions"] is NSNull)
                #expect(fake.callCount >= 1)
            }
        }
    }

    @Test("a provider slower than the timeout: the create answers 201 with conditions null, and the call warms the region")
    func providerTimesOut() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.setBody(openMeteoBody(feelsLike: 10), for: .openMeteo)
            fake.mode = .gated
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let region = try await fitRegions(rig.database, offset: 6, count: 1)[0]
            try await rig.forget([region])
            let base = rig.dependencies
            let dependencies = AppDependencies(
                database: base.database, hasher: base.hasher, rateLimiter: .unlimited, regions: base.regions, weather: rig.service,
                conditionsTimeout: .milliseconds(200)
            )
            try await withTestServer(dependencies: dependencies) { server in
                let author = try await server.anonymousAccount()
                let created = try await server.json(
                    "POST", "/v1/posts", token: author.token, ["weatherType": "rain", "category": "food", "body": "x", "regionId": String(region)]
                )
                // The gate is still shut: the create answered without the provider's answer.
                #expect(created.status == 201, "\(created.text)")
                #expect(created.object["conditions"] is NSNull)
                #expect(fake.callCount == 1)
                fake.gate.open()
                // The call went on: the region is now cached for the next post.
                #expect(await rig.events.wait { $0.contains(.upstreamCall(regionID: region)) })
                let weather = try await server.json("GET", "/v1/regions/\(region)/weather")
                #expect(weather.status == 200)
                let next = try await server.createPost(author, regionId: String(region))
                #expect((next["conditions"] as? [String: Any])?["band"] as? String == "cold")
                #expect(fake.callCount == 1)
            }
        }
    }

    @Test("a create waiting on the provider holds no database connection: creates elsewhere go on")
    func coldCreateHoldsNoConnection() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.setBody(openMeteoBody(feelsLike: 18), for: .openMeteo)
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let regions = try await fitRegions(rig.database, offset: 8, count: 2)
            let (cold, warm) = (regions[0], regions[1])
            try await rig.forget(regions)
            // One connection for the whole server: a create that held it while the provider answers would stop the rest.
            let database = TestDatabase.pool(size: 1)
            let dependencies = AppDependencies(
                database: database, hasher: PasswordHasher(threads: 1), rateLimiter: .unlimited, regions: RegionStore(database: database),
                weather: rig.service, conditionsTimeout: .seconds(60)
            )
            try await withTestServer(dependencies: dependencies) { server in
                let author = try await server.anonymousAccount()
                #expect(try await server.json("GET", "/v1/regions/\(warm)/weather").status == 200)
                fake.mode = .gated
                let pending = Task {
                    try await server.json(
                        "POST", "/v1/posts", token: author.token, ["weatherType": "rain", "category": "food", "body": "cold", "regionId": String(cold)]
                    )
                }
                #expect(await rig.events.wait { $0.contains(.upstreamCall(regionID: cold)) })
                let other = try await server.json(
                    "POST", "/v1/posts", token: author.token, ["weatherType": "rain", "category": "food", "body": "warm", "regionId": String(warm)]
                )
                #expect(other.status == 201, "\(other.text)")
                #expect((other.object["conditions"] as? [String: Any])?["band"] as? String == "cool")
                let list = try await server.json("GET", "/v1/posts?authorId=\(author.id)")
                #expect(list.status == 200 && list.items.count == 1, "the cold create is still waiting for the provider")
                fake.gate.open()
                let created = try await pending.value
                #expect(created.status == 201)
                #expect((created.object["conditions"] as? [String: Any])?["band"] as? String == "cool")
            }
        }
    }

    @Test("a create's upstream call counts against its client's cold budget; past it the post is created with conditions null")
    func withinTheClientsBudget() async throws {
        try await FakeWeatherAPI.with { fake in
            fake.setBody(openMeteoBody(feelsLike: 21), for: .openMeteo)
            let scope = "conditions-\(UUID().uuidString)"
            let rig = WeatherTestRig.make(
                provider: "open-meteo", fake: fake,
                budget: { RateLimitedUpstreamBudget(database: $0, coldPerMinute: 1, upstreamPerMinute: 10_000, windowSeconds: 3600, scope: scope) }
            )
            let regions = try await fitRegions(rig.database, offset: 14, count: 2)
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                let author = try await server.anonymousAccount()
                let first = try await server.createPost(author, regionId: String(regions[0]))
                #expect((first["conditions"] as? [String: Any])?["band"] as? String == "mild")
                // This client's one cold call a minute is spent: the next cold region gives no conditions, not a 429.
                let second = try await server.json(
                    "POST", "/v1/posts", token: author.token, ["weatherType": "rain", "category": "food", "body": "x", "regionId": String(regions[1])]
                )
                #expect(second.status == 201, "\(second.text)")
                #expect(second.object["conditions"] is NSNull)
                #expect(fake.callCount == 1)
                #expect(try await server.json("GET", "/v1/regions/\(regions[1])/weather").status == 429)
                // A cached region is never limited.
                let third = try await server.createPost(author, regionId: String(regions[0]))
                #expect((third["conditions"] as? [String: Any])?["band"] as? String == "mild")
            }
        }
    }

    @Test("posts made before conditions existed, or without weather, show conditions null in reads and lists")
    func oldPostsNull() async throws {
        try await withTestServer { server in  // WEATHER_PROVIDER=none
            let author = try await server.anonymousAccount()
            let created = try await server.createPost(author)
            #expect(created.keys.contains("conditions") && created["conditions"] is NSNull)
            let id = try #require(created["id"] as? String)
            let count = try await server.dependencies.database.query(
                "SELECT count(*) AS n FROM posts WHERE id = \(Int(id)!) AND conditions_weather_type IS NULL AND conditions_band IS NULL"
            )
            #expect(try count[0].decode(Int.self, "n") == 1)
            let list = try await server.json("GET", "/v1/posts?authorId=\(author.id)")
            #expect(list.items.count == 1 && list.items[0]["conditions"] is NSNull)
        }
    }

    @Test("the database refuses conditions whose band is not their feels-like's")
    func bandIsChecked() async throws {
        try await withTestServer { server in
            let author = try await server.anonymousAccount()
            let id = try #require(try await server.createPost(author)["id"] as? String)
            await #expect(throws: (any Error).self) {
                try await server.dependencies.database.execute(
                    """
                    UPDATE posts SET conditions_weather_type = 'rain', conditions_feels_like = 27.9, conditions_band = 'hot',
                                     conditions_observed_at = now() WHERE id = \(Int(id)!)
                    """
                )
            }
            try await server.dependencies.database.execute(
                """
                UPDATE posts SET conditions_weather_type = 'rain', conditions_feels_like = 28.0, conditions_band = 'hot',
                                 conditions_observed_at = now() WHERE id = \(Int(id)!)
                """
            )
        }
    }
}
