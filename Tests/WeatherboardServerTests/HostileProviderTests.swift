import Database
import Foundation
import Testing
import Weather

/// Korean villages (least populous first) that no other test names, so a test here can forget and plant rows in
/// `weather_cache` without touching another test's regions. Each test takes its own slice by `offset`.
enum QuietRegions {
    static func take(_ count: Int, from offset: Int, database: PostgresPool) async throws -> [Int] {
        let rows = try await database.query(
            "SELECT id FROM regions WHERE country_code = 'KR' ORDER BY population, id LIMIT \(count) OFFSET \(offset)"
        )
        let ids = try rows.map { try $0.decode(Int.self, "id") }
        guard ids.count == count else { throw TestFailure("only \(ids.count) quiet regions from \(offset)") }
        return ids
    }

    /// The rows `weather_cache` holds for `regionID`: (humidity as stored, fetched_at in seconds since 1970).
    static func cached(_ regionID: Int, database: PostgresPool) async throws -> [(humidity: String, fetchedAt: Double)] {
        let rows = try await database.query(
            """
            SELECT observation->>'humidity' AS humidity, extract(epoch FROM fetched_at)::float8 AS fetched_at
            FROM weather_cache WHERE region_id = \(regionID)
            """
        )
        return try rows.map { (try $0.decode(String.self, "humidity"), try $0.decode(Double.self, "fetched_at")) }
    }
}

/// Issue #13 finding 4 over the wire: a provider answer with a missing, non-finite or implausible value is a provider
/// failure (503 `weather_unavailable` when nothing is cached, the stale value otherwise), the server stays up, and
/// nothing of it is cached. Rows read back from `weather_cache` are checked the same way.
///
/// Before the fix: `openMeteoHostileAnswers` killed the test process at its first case (humidity 1e300 trapped in
/// `Int(Double)`); the time cases trapped in `CivilDate` (year 2^63−1) and `RFC3339` (observedAt past Int64); the
/// implausible-but-representable cases were served and cached with 200.
@Suite struct HostileProviderTests {
    static func openMeteo(_ replace: String, with value: String) -> String {
        let body = RecordedBodies.openMeteo(weatherCode: 61)
        precondition(body.contains(replace), "the recorded body has no \(replace)")
        return body.replacingOccurrences(of: replace, with: value)
    }

    static let humidity = #""relative_humidity_2m":61"#
    static let time = #""time":"2026-11-22T18:30""#

    /// (label, open-meteo body): each must be refused.
    static let openMeteoCases: [(String, String)] = [
        ("humidity 1e300", openMeteo(humidity, with: #""relative_humidity_2m":1e300"#)),
        ("humidity -1e300", openMeteo(humidity, with: #""relative_humidity_2m":-1e300"#)),
        ("humidity 1e400", openMeteo(humidity, with: #""relative_humidity_2m":1e400"#)),
        ("humidity \"NaN\"", openMeteo(humidity, with: #""relative_humidity_2m":"NaN""#)),
        ("humidity \"Infinity\"", openMeteo(humidity, with: #""relative_humidity_2m":"Infinity""#)),
        ("humidity null", openMeteo(humidity, with: #""relative_humidity_2m":null"#)),
        ("humidity missing", openMeteo(humidity + ",", with: "")),
        ("humidity -3", openMeteo(humidity, with: #""relative_humidity_2m":-3"#)),
        ("temperature 1e9", openMeteo(#""temperature_2m":10.0"#, with: #""temperature_2m":1e9"#)),
        ("pressure 0", openMeteo(#""pressure_msl":1021.7"#, with: #""pressure_msl":0"#)),
        ("wind -5", openMeteo(#""wind_speed_10m":5.0"#, with: #""wind_speed_10m":-5"#)),
        ("uv 1e300", openMeteo(#""uv_index":1.25"#, with: #""uv_index":1e300"#)),
        ("cloud cover 1e300", openMeteo(#""cloud_cover":100"#, with: #""cloud_cover":1e300"#)),
        ("weather code 1e300", openMeteo(#""weather_code":61"#, with: #""weather_code":1e300"#)),
        ("time 2099", openMeteo(time, with: #""time":"2099-01-01T00:00""#)),
        ("time two days ahead", openMeteo(time, with: #""time":"2026-11-24T18:30""#)),
        ("time two days old", openMeteo(time, with: #""time":"2026-11-20T18:30""#)),
        ("time year 2^63-1", openMeteo(time, with: #""time":"9223372036854775807-01-01T00:00""#)),
        ("time year 1", openMeteo(time, with: #""time":"-0001-01-01T00:00""#)),
        ("time seconds 2^63-1", openMeteo(time, with: #""time":"2026-11-22T18:30:9223372036854775807""#)),
        ("offset -2^63", openMeteo(#""utc_offset_seconds":32400"#, with: #""utc_offset_seconds":-9223372036854775808"#)),
        ("offset 2^63", openMeteo(#""utc_offset_seconds":32400"#, with: #""utc_offset_seconds":9223372036854775808"#)),
        // A good answer, but 2 MiB of it: past ProviderHTTP's 1 MiB the transfer is abandoned (the same bound stops
        // a provider that streams without end from filling memory).
        ("a valid answer of 2 MiB", openMeteo(humidity, with: humidity + String(repeating: " ", count: 2 << 20))),
    ]

    @Test func openMeteoHostileAnswers() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake) { $0.breakerThreshold = 1000 }
            let regions = try await QuietRegions.take(Self.openMeteoCases.count, from: 0, database: rig.database)
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                for ((label, body), region) in zip(Self.openMeteoCases, regions) {
                    fake.setBody(body, for: .openMeteo)
                    let before = fake.callCount
                    let answer = try await server.json("GET", "/v1/regions/\(region)/weather")
                    #expect(answer.status == 503, "\(label): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
                    #expect(answer.errorCode == "weather_unavailable", "\(label)")
                    #expect(fake.callCount == before + 1, "\(label): one upstream call, not retried")
                    #expect(try await QuietRegions.cached(region, database: rig.database).isEmpty, "\(label): nothing cached")
                    let health = try await server.request("GET", "/healthz")
                    #expect(health.status == 200, "\(label): the server is up")
                }
                #expect(rig.events.count(.upstreamFailure(regionID: regions[0])) == 1)
            }
        }
    }

    @Test func hostileAnswerAfterAGoodOneServesTheStaleValue() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake) { $0.breakerThreshold = 1000 }
            let regions = try await QuietRegions.take(4, from: 40, database: rig.database)
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                for region in regions {
                    let fresh = try await server.json("GET", "/v1/regions/\(region)/weather")
                    #expect(fresh.status == 200)
                }
                let stored = try await QuietRegions.cached(regions[0], database: rig.database)
                rig.clock.advance(seconds: 601)
                let hostile = [
                    Self.openMeteo(Self.humidity, with: #""relative_humidity_2m":1e300"#),
                    Self.openMeteo(Self.time, with: #""time":"2099-01-01T00:00""#),
                    Self.openMeteo(#""pressure_msl":1021.7"#, with: #""pressure_msl":0"#),
                    Self.openMeteo(#""utc_offset_seconds":32400"#, with: #""utc_offset_seconds":-9223372036854775808"#),
                ]
                for (region, body) in zip(regions, hostile) {
                    fake.setBody(body, for: .openMeteo)
                    let stale = try await server.json("GET", "/v1/regions/\(region)/weather?units=imperial")
                    #expect(stale.status == 200)
                    #expect(stale.object["stale"] as? Bool == true)
                    #expect(stale.object["humidity"] as? Double == 61)
                    #expect(stale.object["observedAt"] as? String == "2026-11-22T09:30:00Z")
                }
                #expect(try await QuietRegions.cached(regions[0], database: rig.database).map(\.fetchedAt) == stored.map(\.fetchedAt))
                #expect(try await QuietRegions.cached(regions[0], database: rig.database).map(\.humidity) == ["61"])
            }
        }
    }

    @Test func openWeatherMapHostileTimesAndValues() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "openweathermap", fake: fake) { $0.breakerThreshold = 1000 }
            let dt = #""dt":1795339800"#
            let cases: [(String, String)] = [
                ("dt 2^63-1", RecordedBodies.openWeatherMap.replacingOccurrences(of: dt, with: #""dt":9223372036854775807"#)),
                ("dt -2^63", RecordedBodies.openWeatherMap.replacingOccurrences(of: dt, with: #""dt":-9223372036854775808"#)),
                ("dt -5", RecordedBodies.openWeatherMap.replacingOccurrences(of: dt, with: #""dt":-5"#)),
                ("dt 2100", RecordedBodies.openWeatherMap.replacingOccurrences(of: dt, with: #""dt":4102444800"#)),
                ("dt 1e300", RecordedBodies.openWeatherMap.replacingOccurrences(of: dt, with: #""dt":1e300"#)),
                ("humidity 1e300", RecordedBodies.openWeatherMap.replacingOccurrences(of: #""humidity":55"#, with: #""humidity":1e300"#)),
                ("condition id 1e300", RecordedBodies.openWeatherMap.replacingOccurrences(of: #""id":802"#, with: #""id":1e300"#)),
            ]
            let regions = try await QuietRegions.take(cases.count, from: 60, database: rig.database)
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                for ((label, body), region) in zip(cases, regions) {
                    #expect(body != RecordedBodies.openWeatherMap, "\(label) changes the body")
                    fake.setBody(body, for: .openWeatherMap)
                    let answer = try await server.json("GET", "/v1/regions/\(region)/weather")
                    #expect(answer.status == 503, "\(label): \(answer.status)")
                    #expect(answer.errorCode == "weather_unavailable", "\(label)")
                    #expect(try await QuietRegions.cached(region, database: rig.database).isEmpty, "\(label): nothing cached")
                }
                #expect(try await server.request("GET", "/healthz").status == 200)
            }
        }
    }

    @Test func kmaHostileValues() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "kma", fake: fake) { $0.breakerThreshold = 1000 }
            let now = RecordedBodies.kmaNowcast
            let cases: [(String, String)] = [
                ("REH nan", now.replacingOccurrences(of: #""category":"REH","nx":60,"ny":127,"obsrValue":"80""#, with: #""category":"REH","nx":60,"ny":127,"obsrValue":"nan""#)),
                ("PTY 1e300", now.replacingOccurrences(of: #""category":"PTY","nx":60,"ny":127,"obsrValue":"3""#, with: #""category":"PTY","nx":60,"ny":127,"obsrValue":"1e300""#)),
                ("T1H 1e9", now.replacingOccurrences(of: #""obsrValue":"-1.5""#, with: #""obsrValue":"1e9""#)),
                ("WSD -inf", now.replacingOccurrences(of: #""obsrValue":"1.2""#, with: #""obsrValue":"-inf""#)),
                ("base date 99999999", now.replacingOccurrences(of: #""baseDate":"20261122""#, with: #""baseDate":"99999999""#)),
            ]
            let regions = try await QuietRegions.take(cases.count, from: 80, database: rig.database)
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                for ((label, body), region) in zip(cases, regions) {
                    #expect(body != now, "\(label) changes the body")
                    fake.setBody(body, for: .kmaNowcast)
                    let answer = try await server.json("GET", "/v1/regions/\(region)/weather")
                    #expect(answer.status == 503, "\(label): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
                    #expect(try await QuietRegions.cached(region, database: rig.database).isEmpty, "\(label): nothing cached")
                }
                #expect(try await server.request("GET", "/healthz").status == 200)
            }
        }
    }

    /// An observation as `weather_cache` stores it, with `humidity` and `observedAt` as given (JSON text).
    static func observationJSON(humidity: String = "61", observedAt: String = "1795339800", temperature: String = "10") -> String {
        #"{"weatherType":"rain","temperature":\#(temperature),"feelsLike":8.5,"humidity":\#(humidity),"pressure":1021.7,"windSpeed":5,"uvIndex":1.25,"cloudiness":100,"observedAt":\#(observedAt)}"#
    }

    @Test func badRowsInTheSharedTableAreNotServed() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake) { $0.breakerThreshold = 1000 }
            let now = rig.clock.now
            // (label, observation JSON, fetched_at as SQL text)
            let planted: [(String, String, String)] = [
                ("humidity 1e300", Self.observationJSON(humidity: "1e300"), "now"),
                ("humidity -5", Self.observationJSON(humidity: "-5"), "now"),
                ("temperature 1e9", Self.observationJSON(temperature: "1e9"), "now"),
                ("observedAt 1e300", Self.observationJSON(observedAt: "1e300"), "now"),
                ("observedAt -1e12", Self.observationJSON(observedAt: "-1e12"), "now"),
                ("observedAt next year", Self.observationJSON(observedAt: "1830000000"), "now"),
                ("fetched_at 2100", Self.observationJSON(), "2100-01-01T00:00:00Z"),
                ("fetched_at infinity", Self.observationJSON(), "infinity"),
                ("fetched_at 1900", Self.observationJSON(), "1900-01-01T00:00:00Z"),
                // Another instance's clock an hour ahead: the row would pin the cache as fresh for an hour.
                ("fetched_at an hour ahead", Self.observationJSON(), PostgresTimestampText.format(now.addingTimeInterval(3600))),
            ]
            let regions = try await QuietRegions.take(planted.count * 2, from: 100, database: rig.database)
            try await rig.forget(regions)
            let stamp = PostgresTimestampText.format(now)
            for (index, (_, json, fetched)) in planted.enumerated() {
                let fetchedAt = fetched == "now" ? stamp : fetched
                for region in [regions[index], regions[planted.count + index]] {
                    try await rig.database.execute(
                        "INSERT INTO weather_cache (region_id, provider, observation, fetched_at) VALUES (\(region), 'open-meteo', \(json)::jsonb, \(fetchedAt)::timestamptz)"
                    )
                }
            }
            try await withTestServer(dependencies: rig.dependencies) { server in
                // Provider up: the bad row is ignored, the provider asked, the good value served and stored.
                for (index, (label, _, _)) in planted.enumerated() {
                    let region = regions[index]
                    let before = fake.callCount
                    let answer = try await server.json("GET", "/v1/regions/\(region)/weather")
                    #expect(answer.status == 200, "\(label): \(answer.status)")
                    #expect(answer.object["humidity"] as? Double == 61, "\(label)")
                    #expect(answer.object["temperature"] as? Double == 10, "\(label)")
                    #expect(answer.object["stale"] as? Bool == false, "\(label)")
                    #expect(fake.callCount > before, "\(label): the row was not trusted")  // (a transport retry under load may add one)
                    let rows = try await QuietRegions.cached(region, database: rig.database)
                    #expect(rows.map(\.humidity) == ["61"], "\(label): the good value replaced the bad row")
                    #expect(rows.map(\.fetchedAt) == [now.timeIntervalSince1970], "\(label): the good value replaced the bad row")
                }
                // Provider down: a bad row is not a stale value either.
                fake.mode = .status(404)
                for (index, (label, _, _)) in planted.enumerated() {
                    let answer = try await server.json("GET", "/v1/regions/\(regions[planted.count + index])/weather")
                    #expect(answer.status == 503, "\(label): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
                    #expect(answer.errorCode == "weather_unavailable", "\(label)")
                }
                #expect(try await server.request("GET", "/healthz").status == 200)
            }
        }
    }
}

/// `2026-11-22T09:40:00Z`-style text for a `::timestamptz` cast in a planted row.
enum PostgresTimestampText {
    static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
