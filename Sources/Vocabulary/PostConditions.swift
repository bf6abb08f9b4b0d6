import Foundation

/// The weather a post was written in (CONTRACT §9's `conditions`): its region's weather as the server knew it at
/// the create, feels-like in °C rounded to one decimal, and that value's band. Recorded once; edits never change it.
public struct PostConditions: Codable, Sendable, Equatable {
    public var weatherType: WeatherType
    /// °C, one decimal.
    public var feelsLike: Double
    public var band: FeelsLikeBand
    public var observedAt: Date

    /// The largest feels-like magnitude stored (`numeric(4,1)`); a value past it (never plausible) records nothing.
    public static let maxMagnitude = 999.9

    /// Nil for a feels-like that is not finite or does not fit the stored column: the post then has no conditions.
    public init?(weatherType: WeatherType, feelsLikeCelsius: Double, observedAt: Date) {
        guard let band = FeelsLikeBand(celsius: feelsLikeCelsius) else { return nil }
        let shown = FeelsLikeBand.rounded(feelsLikeCelsius)
        guard abs(shown) <= Self.maxMagnitude else { return nil }
        self.init(weatherType: weatherType, feelsLike: shown, band: band, observedAt: observedAt)
    }

    /// As stored: the values are taken as they are.
    public init(weatherType: WeatherType, feelsLike: Double, band: FeelsLikeBand, observedAt: Date) {
        self.weatherType = weatherType
        self.feelsLike = feelsLike
        self.band = band
        self.observedAt = observedAt
    }
}
