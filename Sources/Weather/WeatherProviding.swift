import Vocabulary

/// Current weather by region, cached (what the feed and `include=weather` call).
public protocol WeatherProviding: Sendable {
    /// The region's current weather in `units`, with its description in `language`. `requester` is who asks, for
    /// the upstream budget (CONTRACT §6). Throws `WeatherError.unknownRegion` (→ 404), `WeatherError.unavailable`
    /// (→ 503 `weather_unavailable`) or `WeatherError.rateLimited` (→ 429 `rate_limited`).
    func currentWeather(regionID: Int, units: Units, language: Language, requester: WeatherRequester) async throws -> CurrentWeather
}

extension WeatherProviding {
    public func currentWeather(regionID: Int, units: Units, language: Language = .ko) async throws -> CurrentWeather {
        try await currentWeather(regionID: regionID, units: units, language: language, requester: .server)
    }

    /// The weather of several regions at once, each distinct region asked once, concurrently. Regions whose
    /// weather is unavailable (or unknown, or refused by `requester`'s upstream limit) are missing from the result:
    /// `include=weather` shows them as null.
    public func currentWeather(
        regionIDs: some Sequence<Int>, units: Units, language: Language = .ko, requester: WeatherRequester = .server
    ) async -> [Int: CurrentWeather] {
        await withTaskGroup(of: (Int, CurrentWeather?).self) { group in
            for id in Set(regionIDs) {
                group.addTask { (id, try? await self.currentWeather(regionID: id, units: units, language: language, requester: requester)) }
            }
            var result: [Int: CurrentWeather] = [:]
            for await (id, weather) in group {
                if let weather { result[id] = weather }
            }
            return result
        }
    }
}
