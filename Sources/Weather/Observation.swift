import Foundation
import Vocabulary

/// What a provider reports for one place, always in metric units (°C, m/s, hPa, %), as precise as it reports it.
/// This is what the cache stores; `CurrentWeather` (Vocabulary) is what clients see, made from it by
/// `CachedObservation.currentWeather` alone.
public struct Observation: Codable, Sendable, Equatable {
    public var weatherType: WeatherType
    public var temperature: Double
    public var feelsLike: Double
    public var humidity: Double
    /// Sea-level pressure; nil when the provider does not report it (kma).
    public var pressure: Double?
    public var windSpeed: Double
    public var uvIndex: Double?
    public var cloudiness: Double
    public var observedAt: Date

    public init(
        weatherType: WeatherType, temperature: Double, feelsLike: Double, humidity: Double, pressure: Double?,
        windSpeed: Double, uvIndex: Double?, cloudiness: Double, observedAt: Date
    ) {
        self.weatherType = weatherType
        self.temperature = temperature
        self.feelsLike = feelsLike
        self.humidity = humidity
        self.pressure = pressure
        self.windSpeed = windSpeed
        self.uvIndex = uvIndex
        self.cloudiness = cloudiness
        self.observedAt = observedAt
    }
}

/// A cached observation: where it came from and when it was fetched.
public struct CachedObservation: Sendable, Equatable {
    public var regionID: Int
    public var provider: String
    public var observation: Observation
    public var fetchedAt: Date
    /// True when this is an old value served because the provider failed.
    public var stale: Bool

    public init(regionID: Int, provider: String, observation: Observation, fetchedAt: Date, stale: Bool = false) {
        self.regionID = regionID
        self.provider = provider
        self.observation = observation
        self.fetchedAt = fetchedAt
        self.stale = stale
    }

    /// The contract's weather object in the requested units and language.
    public func currentWeather(units: Units, language: Language = .ko) -> CurrentWeather {
        let o = observation
        return CurrentWeather(
            regionId: String(regionID),
            weatherType: o.weatherType,
            description: o.weatherType.description(in: language),
            temperature: units.temperature(fromCelsius: o.temperature),
            feelsLike: units.temperature(fromCelsius: o.feelsLike),
            humidity: Plausible.wholePercent(o.humidity),
            pressure: o.pressure.map(Units.round),
            windSpeed: units.speed(fromMetresPerSecond: o.windSpeed),
            uvIndex: o.uvIndex.map(Units.round),
            cloudiness: Plausible.wholePercent(o.cloudiness),
            observedAt: o.observedAt,
            fetchedAt: fetchedAt,
            provider: provider,
            stale: stale,
            units: units
        )
    }
}
