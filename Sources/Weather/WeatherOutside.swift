import Vocabulary

/// The weather outside a region and its feels-like band (CONTRACT §9): what `sort=fit`, the feed and the outfit guide
/// rank and dress for. The one place that maps weather to a band; the band is decided in °C whatever `units` the
/// weather is shown in.
public struct WeatherOutside: Sendable, Equatable {
    public var current: CurrentWeather
    public var band: FeelsLikeBand

    /// The band of `current` (shown in its own units). The provider's values are checked before they are cached, so
    /// cached weather always has a finite feels-like; none is `WeatherError.unavailable` (503 `weather_unavailable`).
    public init(_ current: CurrentWeather) throws(WeatherError) {
        guard let band = FeelsLikeBand(feelsLike: current.feelsLike, units: current.units) else {
            throw .unavailable("the weather has no feels-like temperature", retryAfterSeconds: nil)
        }
        self.current = current
        self.band = band
    }
}

extension WeatherProviding {
    /// The region's current weather in `units` and its feels-like band. Throws as `currentWeather` does
    /// (`unknownRegion` → 404, `unavailable` → 503, `rateLimited` → 429), and `unavailable` for weather without a
    /// feels-like.
    public func outside(regionID: Int, units: Units, language: Language, requester: WeatherRequester) async throws -> WeatherOutside {
        try WeatherOutside(await currentWeather(regionID: regionID, units: units, language: language, requester: requester))
    }
}
