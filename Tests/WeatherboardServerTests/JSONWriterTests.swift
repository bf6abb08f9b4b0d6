import Foundation
import Testing
import Vocabulary
import WeatherboardAPI

@Suite("JSONWriter")
struct JSONWriterTests {
    static let tricky = "quote \" backslash \\ newline \n tab \t cr \r bell \u{7} nul \u{0} 한글 🌧️ </script>"

    func post(weather: WeatherResponse?? = .none, revisions: [RevisionResponse]? = nil, status: String? = "hidden") -> PostResponse {
        PostResponse(
            id: "42", weatherType: "rain", category: "food", title: Self.tricky, body: Self.tricky,
            region: .init(id: "1835848", name: "서울", countryCode: "KR", currentWeather: weather),
            author: .init(id: "7", displayName: "익명-ab12"),
            createdAt: Date(timeIntervalSince1970: 1_795_000_000), updatedAt: Date(timeIntervalSince1970: 1_795_000_123.9),
            edited: true, isMine: false, status: status, revisions: revisions
        )
    }

    func same(_ value: some Encodable & JSONWritable) throws {
        var writer = JSONWriter()
        value.write(to: &writer)
        let fast = try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? NSDictionary
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(RFC3339.format(date))
        }
        let slow = try JSONSerialization.jsonObject(with: encoder.encode(value)) as? NSDictionary
        #expect(fast != nil)
        if let fast, let slow, fast != slow {
            for key in Set(fast.allKeys.map { "\($0)" } + slow.allKeys.map { "\($0)" }) where "\(fast[key] ?? "∅")" != "\(slow[key] ?? "∅")" {
                Issue.record("key \(key): fast \(fast[key] ?? "∅") vs JSONEncoder \(slow[key] ?? "∅")")
            }
        }
    }

    @Test("posts and pages write the same JSON as JSONEncoder, escapes included")
    func matchesJSONEncoder() throws {
        let weather = WeatherResponse(
            regionId: "1835848", weatherType: "rain", description: "비", temperature: 12.5, feelsLike: 11, humidity: 80, pressure: 1013.2,
            windSpeed: 3.4, uvIndex: nil, cloudiness: 90, observedAt: Date(timeIntervalSince1970: 1_795_000_000),
            fetchedAt: Date(timeIntervalSince1970: 1_795_000_060), provider: "open-meteo", stale: false, units: "metric"
        )
        try same(post())
        try same(post(status: nil))
        try same(post(weather: .some(weather)))
        try same(post(weather: .some(nil)))
        try same(post(revisions: [RevisionResponse(weatherType: "snow", category: "music", title: nil, body: Self.tricky, replacedAt: Date())]))
        try same(Page(items: [post(), post(status: nil)], nextCursor: "abc"))
        try same(Page<PostResponse>(items: [], nextCursor: nil))
    }

    @Test("the weather object always carries all 15 keys, absent values as null")
    func weatherKeys() throws {
        let weather = WeatherResponse(
            regionId: "1", weatherType: "snow", description: "눈이 옵니다!", temperature: -1.5, feelsLike: -4, humidity: 90, pressure: nil,
            windSpeed: 2, uvIndex: nil, cloudiness: 100, observedAt: Date(timeIntervalSince1970: 0), fetchedAt: Date(timeIntervalSince1970: 60),
            provider: "kma", stale: true, units: "metric"
        )
        var writer = JSONWriter()
        weather.write(to: &writer)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(writer.bytes)) as? [String: Any])
        #expect(Set(json.keys) == ["regionId", "weatherType", "description", "temperature", "feelsLike", "humidity", "pressure",
                                   "windSpeed", "uvIndex", "cloudiness", "observedAt", "fetchedAt", "provider", "stale", "units"])
        #expect(json["uvIndex"] is NSNull)
        #expect(json["pressure"] is NSNull)
        #expect(json["observedAt"] as? String == "1970-01-01T00:00:00Z")
        try same(weather)
    }

    @Test("RFC 3339 times are UTC with Z, to the second")
    func dates() {
        #expect(RFC3339.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1_795_000_123.9)) == "2026-11-18T11:08:43Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00Z")
    }
}
