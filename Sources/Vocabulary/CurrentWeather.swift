import Foundation

/// The current weather of a region in the units asked for: the one model of the contract's weather object
/// (CONTRACT §6), `{regionId, weatherType, description, temperature, feelsLike, humidity, pressure, windSpeed,
/// uvIndex|null, cloudiness, observedAt, fetchedAt, provider, stale, units}`. `Weather` makes it from a cached
/// metric `Observation`; `WeatherboardAPI` writes it as is (its `JSONWritable` conformance is the wire form, its
/// field names the JSON keys). Metric: °C and m/s; imperial: °F and mph. `pressure` is sea-level hPa (null only
/// with the kma provider, which does not report it); `humidity` and `cloudiness` are whole percentages.
public struct CurrentWeather: Codable, Sendable, Equatable {
    public var regionId: String
    public var weatherType: WeatherType
    public var description: String
    public var temperature: Double
    public var feelsLike: Double
    public var humidity: Int
    public var pressure: Double?
    public var windSpeed: Double
    public var uvIndex: Double?
    public var cloudiness: Int
    public var observedAt: Date
    public var fetchedAt: Date
    public var provider: String
    public var stale: Bool
    public var units: Units

    public init(
        regionId: String, weatherType: WeatherType, description: String, temperature: Double, feelsLike: Double,
        humidity: Int, pressure: Double?, windSpeed: Double, uvIndex: Double?, cloudiness: Int, observedAt: Date,
        fetchedAt: Date, provider: String, stale: Bool, units: Units
    ) {
        self.regionId = regionId
        self.weatherType = weatherType
        self.description = description
        self.temperature = temperature
        self.feelsLike = feelsLike
        self.humidity = humidity
        self.pressure = pressure
        self.windSpeed = windSpeed
        self.uvIndex = uvIndex
        self.cloudiness = cloudiness
        self.observedAt = observedAt
        self.fetchedAt = fetchedAt
        self.provider = provider
        self.stale = stale
        self.units = units
    }
}
