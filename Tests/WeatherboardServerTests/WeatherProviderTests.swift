import Foundation
import Testing
import Weather

/// Each provider over the real libcurl path, against recorded bodies served on loopback.
@Suite struct WeatherProviderTests {
    @Test func openMeteo() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let daegu = 1835329
            try await rig.forget([daegu])
            try await withTestServer(dependencies: rig.dependencies) { server in
                let response = try await server.json("GET", "/v1/regions/\(daegu)/weather")
                #expect(response.status == 200, "\(response.text)")
                let w = response.object
                #expect(w["regionId"] as? String == "\(daegu)")
                #expect(w["weatherType"] as? String == "rain")
                #expect(w["description"] as? String == "우산을 챙기세요!")
                #expect(w["temperature"] as? Double == 10)
                #expect(w["feelsLike"] as? Double == 8.5)
                #expect(w["humidity"] as? Int == 61)
                #expect(w["pressure"] as? Double == 1021.7)
                #expect(w["windSpeed"] as? Double == 5)
                #expect(w["uvIndex"] as? Double == 1.3)
                #expect(w["cloudiness"] as? Int == 100)
                #expect(w["observedAt"] as? String == "2026-11-22T09:30:00Z")
                #expect(w["provider"] as? String == "open-meteo")
                #expect(w["stale"] as? Bool == false)
                #expect(w["units"] as? String == "metric")
                #expect(Set(w.keys) == ["regionId", "weatherType", "description", "temperature", "feelsLike", "humidity", "pressure",
                                        "windSpeed", "uvIndex", "cloudiness", "observedAt", "fetchedAt", "provider", "stale", "units"])
                #expect(fake.callCount == 1)
                let call = try #require(fake.calls.first)
                #expect(call.hasPrefix("/v1/forecast?latitude=35.8703&longitude=128.5911&current="))
                #expect(call.contains("wind_speed_unit=ms"))

                // Imperial from the same cache entry: no second upstream call.
                let imperial = try await server.json("GET", "/v1/regions/\(daegu)/weather?units=imperial", headers: [("Accept-Language", "en")])
                #expect(imperial.status == 200)
                #expect(imperial.object["temperature"] as? Double == 50)
                #expect(imperial.object["feelsLike"] as? Double == 47.3)
                #expect(imperial.object["windSpeed"] as? Double == 11.2)
                #expect(imperial.object["units"] as? String == "imperial")
                #expect(imperial.object["description"] as? String == "Take an umbrella!")
                #expect(fake.callCount == 1)

                let bad = try await server.json("GET", "/v1/regions/\(daegu)/weather?units=kelvin")
                #expect(bad.status == 400)
                #expect(bad.errorCode == "bad_request")
                let unknown = try await server.json("GET", "/v1/regions/999999999/weather")
                #expect(unknown.status == 404)
                #expect(unknown.errorCode == "not_found")
                let malformed = try await server.json("GET", "/v1/regions/seoul/weather")
                #expect(malformed.status == 404)
            }
        }
    }

    @Test func openWeatherMap() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "openweathermap", fake: fake)
            let daejeon = 1835235
            try await rig.forget([daejeon])
            try await withTestServer(dependencies: rig.dependencies) { server in
                let response = try await server.json("GET", "/v1/regions/\(daejeon)/weather")
                #expect(response.status == 200, "\(response.text)")
                let w = response.object
                #expect(w["weatherType"] as? String == "scatteredClouds")
                #expect(w["temperature"] as? Double == 2.1)
                #expect(w["feelsLike"] as? Double == -1.5)
                #expect(w["pressure"] as? Double == 1024)
                #expect(w["uvIndex"] as? Double == 0.3)
                #expect(w["cloudiness"] as? Int == 40)
                #expect(w["provider"] as? String == "openweathermap")
                let call = try #require(fake.calls.first)
                #expect(call.hasPrefix("/data/3.0/onecall?lat=36.3491&lon=127.3849&"))
                #expect(call.contains("units=metric"))
                #expect(call.contains("appid=test-key"))
            }
        }
    }

    @Test func kma() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "kma", fake: fake)
            let seoul = 1835848
            try await rig.forget([seoul])
            try await withTestServer(dependencies: rig.dependencies) { server in
                let response = try await server.json("GET", "/v1/regions/\(seoul)/weather")
                #expect(response.status == 200, "\(response.text)")
                let w = response.object
                // PTY 3 (snow) wins over SKY 4.
                #expect(w["weatherType"] as? String == "snow")
                #expect(w["temperature"] as? Double == -1.5)
                #expect(w["humidity"] as? Int == 80)
                #expect(w["windSpeed"] as? Double == 1.2)
                #expect(w["pressure"] is NSNull)
                #expect(w["uvIndex"] is NSNull)
                #expect(w["cloudiness"] as? Int == 95)
                #expect(w["observedAt"] as? String == "2026-11-22T09:00:00Z")
                #expect(w["provider"] as? String == "kma")
                let calls = fake.calls
                #expect(calls.count == 2)
                #expect(calls.contains { $0.hasPrefix("/kma/getUltraSrtNcst?") && $0.contains("&base_date=20261122&base_time=1700&nx=60&ny=127") })
                #expect(calls.contains { $0.hasPrefix("/kma/getUltraSrtFcst?") && $0.contains("&base_date=20261122&base_time=1730&nx=60&ny=127") })
                #expect(calls.allSatisfy { $0.contains("serviceKey=test%2Bkey%2F%3D%3D") && $0.contains("dataType=JSON") })
                // Not a Korean region: KMA cannot serve it.
                let paris = try await server.json("GET", "/v1/regions/2988507/weather")
                #expect(paris.status == 503)
                #expect(paris.errorCode == "weather_unavailable")
                #expect(fake.callCount == 2)
            }
        }
    }

    @Test func providerNone() async throws {
        try await RegionTestCatalog.loaded.value
        try await withTestServer { server in
            let response = try await server.json("GET", "/v1/regions/1835848/weather")
            #expect(response.status == 503)
            #expect(response.errorCode == "weather_unavailable")
            let unknown = try await server.json("GET", "/v1/regions/999999999/weather")
            #expect(unknown.status == 404)
            let region = try await server.json("GET", "/v1/regions/1835848")
            #expect(region.status == 200)
        }
    }
}
