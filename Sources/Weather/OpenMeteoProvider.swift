import Foundation

/// open-meteo.com (no key): `GET {base}/v1/forecast?latitude=&longitude=&current=…&wind_speed_unit=ms`.
public struct OpenMeteoProvider: WeatherProvider {
    public static let defaultBaseURL = "https://api.open-meteo.com"
    public let name = "open-meteo"
    public var baseURL: String
    public var http: ProviderHTTP

    public init(baseURL: String? = nil, http: ProviderHTTP = ProviderHTTP()) {
        self.baseURL = ProviderHTTP.base(baseURL ?? Self.defaultBaseURL)
        self.http = http
    }

    static let variables = "temperature_2m,relative_humidity_2m,apparent_temperature,weather_code,cloud_cover,pressure_msl,wind_speed_10m,uv_index"

    public func url(for region: Region) -> String {
        "\(baseURL)/v1/forecast?latitude=\(ProviderHTTP.coordinate(region.lat))&longitude=\(ProviderHTTP.coordinate(region.lon))"
            + "&current=\(Self.variables)&wind_speed_unit=ms&temperature_unit=celsius"
    }

    public func observe(_ region: Region) async throws -> Observation {
        try Self.parse(try await http.get(url(for: region)))
    }

    struct Body: Decodable {
        struct Current: Decodable {
            var time: String
            var temperature_2m: Double
            var relative_humidity_2m: Double
            var apparent_temperature: Double?
            var weather_code: Int
            var cloud_cover: Double
            var pressure_msl: Double
            var wind_speed_10m: Double
            var uv_index: Double?
        }
        var utc_offset_seconds: Int?
        var current: Current
    }

    /// Reads a `/v1/forecast` answer. Its `time` is local wall time without a zone: `utc_offset_seconds` says which.
    public static func parse(_ body: [UInt8]) throws -> Observation {
        let decoded: Body
        do {
            decoded = try JSONDecoder().decode(Body.self, from: Data(body))
        } catch {
            throw ProviderError(.malformed, "open-meteo: unreadable body (\(error))")
        }
        let c = decoded.current
        guard let local = parseLocalTime(c.time) else {
            throw ProviderError(.malformed, "open-meteo: bad time '\(c.time)'")
        }
        let observedAt = local.addingTimeInterval(-Double(decoded.utc_offset_seconds ?? 0))
        return Observation(
            weatherType: weatherType(wmoCode: c.weather_code),
            temperature: c.temperature_2m,
            feelsLike: c.apparent_temperature ?? c.temperature_2m,
            humidity: c.relative_humidity_2m,
            pressure: c.pressure_msl,
            windSpeed: c.wind_speed_10m,
            uvIndex: c.uv_index,
            cloudiness: c.cloud_cover,
            observedAt: observedAt
        )
    }

    /// WMO weather interpretation codes → the board's types.
    public static func weatherType(wmoCode code: Int) -> WeatherType {
        switch code {
        case 0: return .clearSky
        case 1: return .fewClouds
        case 2: return .scatteredClouds
        case 3: return .brokenClouds
        case 45, 48: return .mist
        case 51...57, 80...82: return .showerRain
        case 61...65: return .rain
        case 66, 67, 71...77, 85, 86: return .snow
        case 95...99: return .thunderStorm
        default: return .unknown
        }
    }

    /// `2026-11-22T09:30` (or with `:ss`) read as if it were UTC.
    static func parseLocalTime(_ text: String) -> Date? {
        let parts = text.split(separator: "T")
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-").compactMap { Int64($0) }
        let time = parts[1].split(separator: ":").compactMap { Int64($0) }
        guard date.count == 3, time.count == 2 || time.count == 3,
            (1...12).contains(date[1]), (1...31).contains(date[2]), (0...23).contains(time[0]), (0...59).contains(time[1])
        else { return nil }
        let days = CivilDate.days(year: date[0], month: date[1], day: date[2])
        let seconds = days * 86_400 + time[0] * 3600 + time[1] * 60 + (time.count == 3 ? time[2] : 0)
        return Date(timeIntervalSince1970: Double(seconds))
    }
}
