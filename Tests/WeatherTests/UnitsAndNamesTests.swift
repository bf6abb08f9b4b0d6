import Foundation
import Testing
import Vocabulary
@testable import Weather

@Suite struct UnitsAndNamesTests {
    static let observation = CachedObservation(
        regionID: 1835848, provider: "open-meteo",
        observation: Observation(weatherType: .snow, temperature: -10, feelsLike: 20, humidity: 50.4, pressure: 1013.25,
                                 windSpeed: 10, uvIndex: nil, cloudiness: 99.6, observedAt: Date(timeIntervalSince1970: 0)),
        fetchedAt: Date(timeIntervalSince1970: 60)
    )

    @Test func metric() {
        let w = Self.observation.currentWeather(units: .metric)
        #expect(w.temperature == -10)
        #expect(w.windSpeed == 10)
        #expect(w.humidity == 50)
        #expect(w.cloudiness == 100)
        #expect(w.units == .metric)
        #expect(w.regionId == "1835848")
        #expect(w.description == "눈이 옵니다!")
    }

    @Test func imperial() {
        let w = Self.observation.currentWeather(units: .imperial, language: .en)
        #expect(w.temperature == 14)
        #expect(w.feelsLike == 68)
        #expect(w.windSpeed == 22.4)
        #expect(w.pressure == 1013.3)
        #expect(w.units == .imperial)
        #expect(w.description == "It's snowing!")
    }

    @Test func unitsQuery() {
        #expect(Units(query: nil) == .metric)
        #expect(Units(query: "imperial") == .imperial)
        #expect(Units(query: "kelvin") == nil)
        #expect(Units(query: "") == nil)
    }

    @Test(arguments: [
        ("Seoul", "seoul"), ("  São   Paulo ", "sao paulo"), ("ZÜRICH", "zurich"), ("서울", "서울"),
        ("\u{1109}\u{1165}\u{110B}\u{116E}\u{11AF}", "서울"), ("Jeju City", "jeju city"), ("Kraków", "krakow"),
    ])
    func normalization(input: String, expected: String) {
        #expect(RegionName.normalize(input) == expected)
    }

    @Test func acceptLanguage() {
        #expect(Language(acceptLanguage: nil) == .ko)
        #expect(Language(acceptLanguage: "en") == .en)
        #expect(Language(acceptLanguage: "en-US,en;q=0.9") == .en)
        #expect(Language(acceptLanguage: "fr-FR, en;q=0.5, ko;q=0.8") == .ko)
        #expect(Language(acceptLanguage: "de") == .ko)
        #expect(Language(acceptLanguage: "ko-KR") == .ko)
    }

    @Test func circuitBreaker() {
        var breaker = CircuitBreaker(threshold: 3, cooldown: 30)
        let t0 = Date(timeIntervalSince1970: 1000)
        for _ in 0..<2 {
        let allowed1 = breaker.allowsRequest(now: t0)
        #expect(allowed1)
            breaker.recordFailure(now: t0)
        }
        let allowed2 = breaker.allowsRequest(now: t0)
        #expect(allowed2)
        breaker.recordFailure(now: t0)
        let allowed3 = breaker.allowsRequest(now: t0.addingTimeInterval(29))
        #expect(!allowed3)
        // Half-open: one trial at a time.
        let allowed4 = breaker.allowsRequest(now: t0.addingTimeInterval(30))
        #expect(allowed4)
        let allowed5 = breaker.allowsRequest(now: t0.addingTimeInterval(30))
        #expect(!allowed5)
        breaker.recordFailure(now: t0.addingTimeInterval(30))
        let allowed6 = breaker.allowsRequest(now: t0.addingTimeInterval(59))
        #expect(!allowed6)
        let allowed7 = breaker.allowsRequest(now: t0.addingTimeInterval(60))
        #expect(allowed7)
        breaker.recordSuccess()
        let allowed8 = breaker.allowsRequest(now: t0.addingTimeInterval(60))
        #expect(allowed8)
        let allowed9 = breaker.allowsRequest(now: t0.addingTimeInterval(60))
        #expect(allowed9)
    }

    @Test func cursorRoundTrip() {
        let cursor = RegionStore.SearchPosition(rank: 1, population: 10_349_312, id: 1_835_848)
        #expect(RegionStore.SearchPosition(token: cursor.token) == cursor)
        #expect(RegionStore.SearchPosition(token: "garbage!") == nil)
        #expect(RegionStore.SearchPosition(token: "Z2FyYmFnZQ") == nil)
        #expect(RegionStore.SearchPosition(token: "") == nil)
    }
}
