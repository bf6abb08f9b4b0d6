import Foundation

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
        let kst = Int64((now.timeIntervalSince1970 + kstOffset).rounded(.down)) - (forecast ? 45 : 40) * 60
        let days = kst >= 0 ? kst / 86_400 : (kst - 86_399) / 86_400
        let secondOfDay = kst - days * 86_400
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

    public func observe(_ region: Region) async throws -> Observation {
        guard !serviceKey.isEmpty else { throw ProviderError(.misconfigured, "KMA_SERVICE_KEY is not set") }
        let grid = KMAGrid.point(lat: region.lat, lon: region.lon)
        guard region.countryCode == "KR", KMAGrid.validX.contains(grid.nx), KMAGrid.validY.contains(grid.ny) else {
            throw ProviderError(.unsupportedRegion, "kma serves Korean regions only")
        }
        let now = self.now()
        async let nowcastBody = http.get(url(operation: "getUltraSrtNcst", grid: grid, base: Self.baseDateTime(now: now, forecast: false)))
        async let forecastBody = http.get(url(operation: "getUltraSrtFcst", grid: grid, base: Self.baseDateTime(now: now, forecast: true)))
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
        let envelope: Envelope
        do {
            envelope = try JSONDecoder().decode(Envelope.self, from: Data(body))
        } catch {
            throw ProviderError(.malformed, "kma \(operation): unreadable body")
        }
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
        guard let temperature = values["T1H"]?.number else {
            throw ProviderError(.malformed, "kma getUltraSrtNcst: no T1H")
        }
        let humidity = values["REH"]?.number ?? 0
        let wind = values["WSD"]?.number ?? 0
        let pty = Int(values["PTY"]?.number ?? earliest["PTY"]?.value.number ?? 0)
        let sky = earliest["SKY"]?.value.number.map { Int($0) }
        let lightning = earliest["LGT"]?.value.number ?? 0
        guard let first = observed.first, let date = first.baseDate, let time = first.baseTime,
            let observedAt = parseKST(date: date, time: time)
        else {
            throw ProviderError(.malformed, "kma getUltraSrtNcst: no base date/time")
        }
        return Observation(
            weatherType: weatherType(pty: pty, sky: sky, lightning: lightning),
            temperature: temperature,
            feelsLike: Units.round(apparentTemperature(celsius: temperature, humidity: humidity, wind: wind)),
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

    /// `20261122` + `0900` in KST.
    static func parseKST(date: String, time: String) -> Date? {
        guard date.count == 8, time.count == 4, let d = Int64(date), let t = Int64(time) else { return nil }
        let days = CivilDate.days(year: d / 10_000, month: d / 100 % 100, day: d % 100)
        let seconds = days * 86_400 + (t / 100) * 3600 + (t % 100) * 60 - Int64(kstOffset)
        return Date(timeIntervalSince1970: Double(seconds))
    }
}
