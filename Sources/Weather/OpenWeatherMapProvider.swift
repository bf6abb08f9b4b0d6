import Foundation

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

    public func observe(_ region: Region) async throws -> Observation {
        guard !apiKey.isEmpty else { throw ProviderError(.misconfigured, "OPENWEATHERMAP_API_KEY is not set") }
        return try Self.parse(try await http.get(url(for: region)))
    }

    struct Body: Decodable {
        struct Current: Decodable {
            struct Condition: Decodable {
                var id: Int?
                var icon: String?
            }
            var dt: Int64
            var temp: Double
            var feels_like: Double?
            var pressure: Double
            var humidity: Double
            var uvi: Double?
            var clouds: Double
            var wind_speed: Double
            var weather: [Condition]?
        }
        var current: Current
    }

    public static func parse(_ body: [UInt8]) throws -> Observation {
        let decoded: Body
        do {
            decoded = try JSONDecoder().decode(Body.self, from: Data(body))
        } catch {
            throw ProviderError(.malformed, "openweathermap: unreadable body (\(error))")
        }
        let c = decoded.current
        let condition = c.weather?.first
        return Observation(
            weatherType: weatherType(icon: condition?.icon, id: condition?.id),
            temperature: c.temp,
            feelsLike: c.feels_like ?? c.temp,
            humidity: c.humidity,
            pressure: c.pressure,
            windSpeed: c.wind_speed,
            uvIndex: c.uvi,
            cloudiness: c.clouds,
            observedAt: Date(timeIntervalSince1970: Double(c.dt))
        )
    }

    /// The icon's first two characters decide (`01d` → clear sky …); the condition id ranges are the fallback.
    public static func weatherType(icon: String?, id: Int?) -> WeatherType {
        switch icon.map({ String($0.prefix(2)) }) {
        case "01": return .clearSky
        case "02": return .fewClouds
        case "03": return .scatteredClouds
        case "04": return .brokenClouds
        case "09": return .showerRain
        case "10": return .rain
        case "11": return .thunderStorm
        case "13": return .snow
        case "50": return .mist
        default: break
        }
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
