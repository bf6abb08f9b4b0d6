import Foundation
import Vocabulary

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

    public func observe(_ region: Region, admitRetry: UpstreamAdmission?) async throws -> Observation {
        try Self.parse(try await http.get(url(for: region), admitRetry: admitRetry))
    }

    /// Every number is optional here: `Plausible` decides what a missing one means (a failure, or for
    /// `uv_index` and `apparent_temperature` nothing).
    struct Body: Decodable {
        struct Current: Decodable {
            var time: String
            var temperature_2m: Double?
            var relative_humidity_2m: Double?
            var apparent_temperature: Double?
            var weather_code: Double?
            var cloud_cover: Double?
            var pressure_msl: Double?
            var wind_speed_10m: Double?
            var uv_index: Double?
        }
        var utc_offset_seconds: Double?
        var current: Current
    }

    /// Reads a `/v1/forecast` answer. Its `time` is local wall time without a zone: `utc_offset_seconds` says which.
    /// A missing, non-finite or implausible value throws `ProviderError` (`Plausible`).
    public static func parse(_ body: [UInt8]) throws -> Observation {
        let source = "open-meteo"
        let decoded = try ProviderJSON.decode(Body.self, from: body, source: source)
        let c = decoded.current
        guard let offset = Plausible.code(decoded.utc_offset_seconds ?? 0), let observedAt = parseLocalTime(c.time, offsetSeconds: Int64(offset)) else {
            throw ProviderError(.implausible, "open-meteo: bad time '\(c.time)' at offset \(decoded.utc_offset_seconds ?? 0)")
        }
        guard let code = Plausible.code(c.weather_code) else {
            throw ProviderError(.implausible, "open-meteo: weather_code \(c.weather_code.map { "\($0)" } ?? "missing") is not a code")
        }
        let temperature = try Plausible.value(c.temperature_2m, .temperature, source: source)
        return Observation(
            weatherType: weatherType(wmoCode: code),
            temperature: temperature,
            feelsLike: try Plausible.value(c.apparent_temperature ?? temperature, .feelsLike, source: source),
            humidity: try Plausible.value(c.relative_humidity_2m, .humidity, source: source),
            pressure: try Plausible.value(c.pressure_msl, .pressure, source: source),
            windSpeed: try Plausible.value(c.wind_speed_10m, .windSpeed, source: source),
            uvIndex: try Plausible.optionalValue(c.uv_index, .uvIndex, source: source),
            cloudiness: try Plausible.value(c.cloud_cover, .cloudiness, source: source),
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

    /// `2026-11-22T09:30` (or with `:ss`) in a zone `offsetSeconds` east of UTC; nil when it is not such a time or
    /// names an absurd one (`Plausible.epochSeconds`).
    static func parseLocalTime(_ text: String, offsetSeconds: Int64 = 0) -> Date? {
        let parts = text.split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        let time = parts[1].split(separator: ":", omittingEmptySubsequences: false)
        guard date.count == 3, time.count == 2 || time.count == 3 else { return nil }
        func number(_ part: Substring, digits: ClosedRange<Int>) -> Int64? {
            guard digits.contains(part.utf8.count), part.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            return Int64(part)
        }
        guard let year = number(date[0], digits: 4...4), let month = number(date[1], digits: 1...2), let day = number(date[2], digits: 1...2),
            let hour = number(time[0], digits: 1...2), let minute = number(time[1], digits: 1...2)
        else { return nil }
        var second: Int64 = 0
        if time.count == 3 {
            guard let s = number(time[2], digits: 1...2) else { return nil }
            second = s
        }
        guard let seconds = Plausible.epochSeconds(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second, offsetSeconds: offsetSeconds
        ) else { return nil }
        return Date(timeIntervalSince1970: Double(seconds))
    }
}
