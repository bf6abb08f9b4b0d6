/// Current weather by region, cached (what the feed and `include=weather` call).
public protocol WeatherProviding: Sendable {
    /// The region's current weather in `units`, with its description in `language`.
    /// Throws `WeatherError.unknownRegion` (→ 404) or `WeatherError.unavailable` (→ 503 `weather_unavailable`).
    func currentWeather(regionID: Int, units: Units, language: DisplayLanguage) async throws -> CurrentWeather
}

extension WeatherProviding {
    public func currentWeather(regionID: Int, units: Units) async throws -> CurrentWeather {
        try await currentWeather(regionID: regionID, units: units, language: .ko)
    }

    /// The weather of several regions at once, each distinct region asked once, concurrently. Regions whose
    /// weather is unavailable (or unknown) are missing from the result: `include=weather` shows them as null.
    public func currentWeather(regionIDs: some Sequence<Int>, units: Units, language: DisplayLanguage = .ko) async -> [Int: CurrentWeather] {
        await withTaskGroup(of: (Int, CurrentWeather?).self) { group in
            for id in Set(regionIDs) {
                group.addTask { (id, try? await self.currentWeather(regionID: id, units: units, language: language)) }
            }
            var result: [Int: CurrentWeather] = [:]
            for await (id, weather) in group {
                if let weather { result[id] = weather }
            }
            return result
        }
    }
}
