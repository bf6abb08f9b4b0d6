import CivilTime
import Foundation
import Vocabulary

/// 기상청 단기예보 조회서비스 (VilageFcstInfoService_2.0), for Korean regions:
/// `getUltraSrtNcst` (초단기실황: T1H, REH, WSD, RN1, PTY) and `getUltraSrtFcst` (초단기예보: SKY, LGT), at the
/// region's grid point (`KMAGrid`). The base URL is `{base}` = `https://apis.data.go.kr/1360000/VilageFcstInfoService_2.0`.
///
/// Mapping: LGT > 0 → thunderStorm; else PTY ≠ 0 → 1 rain, 4/5 showerRain, 2/3/6/7 snow; else SKY 1 → clearSky,
/// 3/4 → brokenClouds. KMA reports no pressure, UV or cloud cover: `pressure` and `uvIndex` are null,
/// `cloudiness` is derived from SKY (1 → 20, 3 → 70, 4 → 95 %), `feelsLike` is the apparent temperature
/// (Steadman) from T1H, REH and WSD.
public struct KMAProvider: WeatherProvider {
    public static let defaultBaseURL = "https://apis.data.go.kr/1360000/VilageFcstInfoService_2.0"
    public let name = "kma"
    /// The nowcast and the forecast.
    public let requestsPerObservation = 2
    public var baseURL: String
    public var serviceKey: String
    public var http: ProviderHTTP
    public var now: @Sendable () -> Date

    public init(serviceKey: String, baseURL: String? = nil, http: ProviderHTTP = ProviderHTTP(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.serviceKey = serviceKey
        self.baseURL = ProviderHTTP.base(baseURL ?? Self.defaultBaseURL)
        self.http = http
        self.now = now
    }

    /// KST, the zone of KMA's base dates and times.
    static let kstOffset: TimeInterval = 9 * 3600

    /// The latest published base time: nowcasts exist for HH00 from about HH:40, forecasts for HH30 from about HH:45.
    static func baseDateTime(now: Date, forecast: Bool) -> (date: String, time: String) {
        // The clock is ours, but the arithmetic stays total whatever it says: clamped to 2000…2199.
        let raw = now.timeIntervalSince1970 + kstOffset
        let bounded = raw.isFinite
            ? min(max(raw, Plausible.earliest.timeIntervalSince1970), Plausible.latest.timeIntervalSince1970 - 1) : Plausible.earliest.timeIntervalSince1970
        let kst = Int64(bounded.rounded(.down)) - (forecast ? 45 : 40) * 60
        let (days, secondOfDay) = CivilDate.split(seconds: kst)
        let hour = secondOfDay / 3600
        let civil = CivilDate.date(days: days)
        let date = String(format: "%04d%02d%02d", Int(civil.year), Int(civil.month), Int(civil.day))
        return (date, String(format: "%02d%02d", Int(hour), forecast ? 30 : 0))
    }

    func url(operation: String, grid: KMAGrid.Point, base: (date: String, time: String)) -> String {
        // data.go.kr hands out the key both percent-encoded and plain: pass an encoded one through unchanged.
        let key = serviceKey.contains("%") ? serviceKey : ProviderHTTP.escape(serviceKey)
        return "\(baseURL)/\(operation)?serviceKey=\(key)&pageNo=1&numOfRows=60&dataType=JSON"
            + "&base_date=\(base.date)&base_time=\(base.time)&nx=\(grid.nx)&ny=\(grid.ny)"
    }

    public func observe(_ region: Region, admitRetry: UpstreamAdmission?) async throws -> Observation {
        guard !serviceKey.isEmpty else { throw ProviderError(.misconfigured, "KMA_SERVICE_KEY is not set") }
        let grid = KMAGrid.point(lat: region.lat, lon: region.lon)
        guard region.countryCode == "KR", KMAGrid.validX.contains(grid.nx), KMAGrid.validY.contains(grid.ny) else {
            throw ProviderError(.unsupportedRegion, "kma serves Korean regions only")
        }
        let now = self.now()
        async let nowcastBody = http.get(url(operation: "getUltraSrtNcst", grid: grid, base: Self.baseDateTime(now: now, forecast: false)), admitRetry: admitRetry)
        async let forecastBody = http.get(url(operation: "getUltraSrtFcst", grid: grid, base: Self.baseDateTime(now: now, forecast: true)), admitRetry: admitRetry)
        return try Self.parse(nowcast: try await nowcastBody, forecast: try await forecastBody)
    }

    // MARK: Parsing

    /// A value KMA sends as a string ("3.2", "강수없음", "1mm 미만") or sometimes a number.
    struct Value: Decodable {
        var text: String
        init(from decoder: any Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let s = try? c.decode(String.self) {
                text = s
            } else if let d = try? c.decode(Double.self) {
                text = String(d)
            } else {
                text = ""
            }
        }
        /// The number, or nil for text such as "강수없음".
        var number: Double? { Double(text.trimmingCharacters(in: .whitespaces)) }
    }

    struct Item: Decodable {
        var baseDate: String?
        var baseTime: String?
        var category: String
        var obsrValue: Value?
        var fcstDate: String?
        var fcstTime: String?
        var fcstValue: Value?
    }

    struct Envelope: Decodable {
        struct Response: Decodable {
            struct Header: Decodable {
                var resultCode: String
                var resultMsg: String?
            }
            struct Body: Decodable {
                struct Items: Decodable { var item: [Item]? }
                var items: Items?
            }
            var header: Header
            var body: Body?
        }
        var response: Response
    }

    static func items(_ body: [UInt8], operation: String) throws -> [Item] {
        let envelope = try ProviderJSON.decode(Envelope.self, from: body, source: "kma \(operation)")
        guard envelope.response.header.resultCode == "00" else {
            throw ProviderError(.status, "kma \(operation): result \(envelope.response.header.resultCode) \(envelope.response.header.resultMsg ?? "")")
        }
        let items = envelope.response.body?.items?.item ?? []
        guard !items.isEmpty else { throw ProviderError(.malformed, "kma \(operation): no items") }
        return items
    }

    public static func parse(nowcast: [UInt8], forecast: [UInt8]) throws -> Observation {
        let observed = try items(nowcast, operation: "getUltraSrtNcst")
        let predicted = try items(forecast, operation: "getUltraSrtFcst")
        var values: [String: Value] = [:]
        for item in observed {
            if let value = item.obsrValue { values[item.category] = value }
        }
        // The forecast's earliest hour is the one closest to now.
        var earliest: [String: (key: String, value: Value)] = [:]
        for item in predicted {
            guard let value = item.fcstValue else { continue }
            let key = (item.fcstDate ?? "") + (item.fcstTime ?? "")
            if let current = earliest[item.category], current.key <= key { continue }
            earliest[item.category] = (key, value)
        }
        let source = "kma"
        let temperature = try Plausible.value(values["T1H"]?.number, .temperature, source: source)
        let humidity = try Plausible.value(values["REH"]?.number, .humidity, source: source)
        let wind = try Plausible.value(values["WSD"]?.number, .windSpeed, source: source)
        // Codes: a present value must be a small whole number; PTY falls back to the forecast's, then to none.
        let ptyValue = values["PTY"] ?? earliest["PTY"]?.value
        let pty: Int
        if let ptyValue {
            guard let code = Plausible.code(ptyValue.number) else { throw ProviderError(.implausible, "kma: PTY '\(ptyValue.text)' is not a code") }
            pty = code
        } else {
            pty = 0
        }
        var sky: Int?
        if let skyValue = earliest["SKY"]?.value {
            guard let code = Plausible.code(skyValue.number) else { throw ProviderError(.implausible, "kma: SKY '\(skyValue.text)' is not a code") }
            sky = code
        }
        var lightning = 0.0
        if let lgt = earliest["LGT"]?.value {
            guard let number = lgt.number, number.isFinite else { throw ProviderError(.implausible, "kma: LGT '\(lgt.text)' is not a number") }
            lightning = number
        }
        guard let first = observed.first, let date = first.baseDate, let time = first.baseTime,
            let observedAt = parseKST(date: date, time: time)
        else {
            throw ProviderError(.implausible, "kma getUltraSrtNcst: no plausible base date/time")
        }
        return Observation(
            weatherType: weatherType(pty: pty, sky: sky, lightning: lightning),
            temperature: temperature,
            feelsLike: try Plausible.value(
                Units.round(apparentTemperature(celsius: temperature, humidity: humidity, wind: wind)), .feelsLike, source: source
            ),
            humidity: humidity,
            pressure: nil,
            windSpeed: wind,
            uvIndex: nil,
            cloudiness: cloudiness(sky: sky),
            observedAt: observedAt
        )
    }

    public static func weatherType(pty: Int, sky: Int?, lightning: Double) -> WeatherType {
        if lightning > 0 { return .thunderStorm }
        switch pty {
        case 1: return .rain
        case 4, 5: return .showerRain
        case 2, 3, 6, 7: return .snow
        default: break
        }
        switch sky {
        case 1: return .clearSky
        case 3, 4: return .brokenClouds
        default: return .unknown
        }
    }

    static func cloudiness(sky: Int?) -> Double {
        switch sky {
        case 1: return 20
        case 3: return 70
        case 4: return 95
        default: return 0
        }
    }

    /// Steadman's apparent temperature (as used by the Australian Bureau of Meteorology), without radiation.
    static func apparentTemperature(celsius t: Double, humidity: Double, wind: Double) -> Double {
        let vapour = humidity / 100 * 6.105 * exp(17.27 * t / (237.7 + t))
        return t + 0.33 * vapour - 0.70 * wind - 4.00
    }

    /// `20261122` + `0900` in KST; nil unless both are digits only and name a plausible time (`Plausible.epochSeconds`).
    static func parseKST(date: String, time: String) -> Date? {
        func digits(_ text: String, _ count: Int) -> Int64? {
            guard text.utf8.count == count, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            return Int64(text)
        }
        guard let d = digits(date, 8), let t = digits(time, 4),
            let seconds = Plausible.epochSeconds(
                year: d / 10_000, month: d / 100 % 100, day: d % 100, hour: t / 100, minute: t % 100, offsetSeconds: Int64(kstOffset)
            )
        else { return nil }
        return Date(timeIntervalSince1970: Double(seconds))
    }
}
