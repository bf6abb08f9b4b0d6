import Foundation
import Vocabulary

/// OpenWeatherMap One Call 3.0: `GET {base}/data/3.0/onecall?lat=&lon=&exclude=…&units=metric&appid=KEY`, `current`.
public struct OpenWeatherMapProvider: WeatherProvider {
    public static let defaultBaseURL = "https://api.openweathermap.org"
    public let name = "openweathermap"
    public var baseURL: String
    public var apiKey: String
    public var http: ProviderHTTP

    public init(apiKey: String, baseURL: String? = nil, http: ProviderHTTP = ProviderHTTP()) {
        self.apiKey = apiKey
        self.baseURL = ProviderHTTP.base(baseURL ?? Self.defaultBaseURL)
        self.http = http
    }

    public func url(for region: Region) -> String {
        "\(baseURL)/data/3.0/onecall?lat=\(ProviderHTTP.coordinate(region.lat))&lon=\(ProviderHTTP.coordinate(region.lon))"
            + "&exclude=minutely,hourly,daily,alerts&units=metric&appid=\(ProviderHTTP.escape(apiKey))"
    }

    public func observe(_ region: Region, admitRetry: UpstreamAdmission?) async throws -> Observation {
        guard !apiKey.isEmpty else { throw ProviderError(.misconfigured, "OPENWEATHERMAP_API_KEY is not set") }
        return try Self.parse(try await http.get(url(for: region), admitRetry: admitRetry))
    }

    /// Every number is optional here: `Plausible` decides what a missing one means.
    struct Body: Decodable {
        struct Current: Decodable {
            struct Condition: Decodable {
                var id: Double?
                var icon: String?
            }
            var dt: Double?
            var temp: Double?
            var feels_like: Double?
            var pressure: Double?
            var humidity: Double?
            var uvi: Double?
            var clouds: Double?
            var wind_speed: Double?
            var weather: [Condition]?
        }
        var current: Current
    }

    /// Reads a One Call answer; a missing, non-finite or implausible value throws `ProviderError` (`Plausible`).
    public static func parse(_ body: [UInt8]) throws -> Observation {
        let source = "openweathermap"
        let decoded = try ProviderJSON.decode(Body.self, from: body, source: source)
        let c = decoded.current
        guard let observedAt = Plausible.date(unixSeconds: c.dt) else {
            throw ProviderError(.implausible, "openweathermap: dt \(c.dt.map { "\($0)" } ?? "missing") is absurd")
        }
        let condition = c.weather?.first
        let id = Plausible.code(condition?.id)
        if let raw = condition?.id, id == nil {
            throw ProviderError(.implausible, "openweathermap: condition id \(raw) is not a code")
        }
        let temperature = try Plausible.value(c.temp, .temperature, source: source)
        return Observation(
            weatherType: weatherType(icon: condition?.icon, id: id),
            temperature: temperature,
            feelsLike: try Plausible.value(c.feels_like ?? temperature, .feelsLike, source: source),
            humidity: try Plausible.value(c.humidity, .humidity, source: source),
            pressure: try Plausible.value(c.pressure, .pressure, source: source),
            windSpeed: try Plausible.value(c.wind_speed, .windSpeed, source: source),
            uvIndex: try Plausible.optionalValue(c.uvi, .uvIndex, source: source),
            cloudiness: try Plausible.value(c.clouds, .cloudiness, source: source),
            observedAt: observedAt
        )
    }

    /// The icon's first two characters decide (`01d` → clear sky …); the condition id ranges are the fallback.
    public static func weatherType(icon: String?, id: Int?) -> WeatherType {
        if let icon, let type = WeatherType(openWeatherMapIcon: icon) { return type }
        guard let id else { return .unknown }
        switch id {
        case 200..<300: return .thunderStorm
        case 300..<400: return .showerRain
        case 511: return .snow
        case 500...504: return .rain
        case 500..<600: return .showerRain
        case 600..<700: return .snow
        case 700..<800: return .mist
        case 800: return .clearSky
        case 801: return .fewClouds
        case 802: return .scatteredClouds
        case 803, 804: return .brokenClouds
        default: return .unknown
        }
    }
}
