import Foundation
import PropertyBased
import Testing
import Vocabulary
@testable import Weather

/// Issue #13 finding 4: provider answers are outside data. Every hostile or random value fed into the three parsers
/// must end in exactly the answer the rules give (`expectedOpenMeteo`, `expectedOpenWeatherMap`, `expectedKMA`: the
/// observation with that value, or a `ProviderError` of the kind the rules name), never in a trap — and a parsed
/// observation must be plausible (CONTRACT §6 ranges) and convert to the client's units without trapping.
///
/// Before the fix of #13, the first hostile humidity (1e300) parsed "fine" and trapped in `Int(Double)` when the
/// observation was shown, killing the test process.
@Suite struct HostileParsingTests {
    /// JSON texts a hostile or broken provider can send where a number belongs.
    static let hostileNumbers: [String] = [
        "1e300", "-1e300", "1e400", "-1e400", "1.7976931348623157e308", "4.9e-324", "-0", "0", "-5", "101", "1e9", "-1e9",
        "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "18446744073709551616",
        "1e19", "0.5", "null", "\"NaN\"", "\"Infinity\"", "\"-Infinity\"", "\"1e300\"", "\"12\"", "true", "[]", "{}", "\"\"",
    ]

    /// Strings (as KMA sends every value) a hostile provider can send.
    static let hostileTexts: [String] = [
        "1e300", "-1e300", "1e400", "nan", "NaN", "inf", "-inf", "Infinity", "9223372036854775808", "-9223372036854775809",
        "1e19", "-5", "101", "0x1p1023", "", " ", "강수없음", "1mm 미만", "0.5", "3.999999999999999999",
    ]

    // MARK: What a parsed observation must be

    static func expectPlausible(_ o: Observation, _ label: String) {
        let contract: [(String, Double, ClosedRange<Double>)] = [
            ("temperature", o.temperature, -90...60), ("humidity", o.humidity, 0...100), ("cloudiness", o.cloudiness, 0...100),
            ("windSpeed", o.windSpeed, 0...120),
        ]
        for (name, value, range) in contract {
            #expect(value.isFinite && range.contains(value), "\(label): \(name) \(value)")
        }
        #expect(o.feelsLike.isFinite && (-130...100).contains(o.feelsLike), "\(label): feelsLike \(o.feelsLike)")
        if let pressure = o.pressure { #expect(pressure.isFinite && (850...1100).contains(pressure), "\(label): pressure \(pressure)") }
        if let uv = o.uvIndex { #expect(uv.isFinite && (0...25).contains(uv), "\(label): uvIndex \(uv)") }
        let t = o.observedAt.timeIntervalSince1970
        // 2000-01-01 … 2200-01-01: anything else is absurd whatever the clock says.
        #expect(t.isFinite && t >= 946_684_800 && t <= 7_258_118_400, "\(label): observedAt \(t)")
    }

    /// A parser's answer: an observation, or a `ProviderError` of one kind.
    enum Outcome: Equatable, CustomStringConvertible {
        case observation(Observation)
        case failure(ProviderError.Kind)

        var description: String {
            switch self {
            case .observation(let o): return "\(o)"
            case .failure(let kind): return "ProviderError(\(kind))"
            }
        }
    }

    /// Parses, and expects `expected`; an observation must also be plausible and show in both units.
    static func expect(_ label: String, _ expected: Outcome, _ parse: () throws -> Observation) {
        let outcome: Outcome
        do {
            outcome = .observation(try parse())
        } catch let error as ProviderError {
            outcome = .failure(error.kind)
        } catch {
            Issue.record("\(label): a parser threw \(error), not a ProviderError")
            return
        }
        #expect(outcome == expected, "\(label)")
        guard case .observation(let parsed) = outcome else { return }
        expectPlausible(parsed, label)
        let cached = CachedObservation(regionID: 1, provider: "test", observation: parsed, fetchedAt: Date(timeIntervalSince1970: 1_795_000_000))
        for units in Units.allCases {
            let shown = cached.currentWeather(units: units, language: .en)
            #expect((0...100).contains(shown.humidity) && (0...100).contains(shown.cloudiness), "\(label): \(shown)")
            #expect(shown.temperature.isFinite && shown.windSpeed.isFinite, "\(label): \(shown)")
        }
    }

    // MARK: The rules, written apart from the parsers

    /// A value the rules refuse: the answer is a `ProviderError` of kind `.implausible`.
    struct Refused: Error {}

    /// How Foundation's `JSONDecoder` reads a JSON text where a parser declares `Double?` (the decoder is not under
    /// test; what the parser does with its reading is).
    enum Reading: Equatable {
        case number(Double)
        case absent
        case unreadable
    }

    static func reading(_ literal: String) -> Reading {
        guard let values = try? JSONDecoder().decode([Double?].self, from: Data("[\(literal)]".utf8)), values.count == 1 else { return .unreadable }
        return values[0].map(Reading.number) ?? .absent
    }

    /// A JSON text where a parser declares `String?`: nil when unreadable, `.some(nil)` for null.
    static func stringReading(_ literal: String) -> String?? {
        guard let values = try? JSONDecoder().decode([String?].self, from: Data("[\(literal)]".utf8)), values.count == 1 else { return nil }
        return .some(values[0])
    }

    /// CONTRACT §6 (metric); the apparent temperature may go past the measured one.
    static let temperature: ClosedRange<Double> = -90...60
    static let feelsLike: ClosedRange<Double> = -130...100
    static let percent: ClosedRange<Double> = 0...100
    static let pressure: ClosedRange<Double> = 850...1100
    static let windSpeed: ClosedRange<Double> = 0...120
    static let uvIndex: ClosedRange<Double> = 0...25

    /// A measured value: a finite number in `range`, else refused.
    static func measured(_ value: Double?, _ range: ClosedRange<Double>) throws(Refused) -> Double {
        guard let value, value.isFinite, range.contains(value) else { throw Refused() }
        return value
    }

    static func measured(_ reading: Reading, _ range: ClosedRange<Double>) throws(Refused) -> Double {
        guard case .number(let value) = reading else { throw Refused() }
        return try measured(value, range)
    }

    /// A provider's code: a whole number within ±1,000,000, else refused.
    static func code(_ value: Double?) throws(Refused) -> Int {
        guard let value, value.isFinite, value == value.rounded(), abs(value) <= 1_000_000 else { throw Refused() }
        return Int(value)
    }

    /// A civil time in a zone `offset` seconds east of UTC, years 2000…2199, a day the month has, a second up to 60;
    /// else refused. The calendar is `RFC3339`'s (tested on its own), read in UTC and shifted by the offset.
    static func civilTime(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int = 0, offset: Int = 0) throws(Refused) -> Date {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        guard (2000...2199).contains(year), (0...99).contains(month), (0...99).contains(day), (0...99).contains(hour),
            (0...99).contains(minute), (0...99).contains(second), abs(offset) <= 64_800,
            let utc = RFC3339.parse("\(year)-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))Z")
        else { throw Refused() }
        return utc.addingTimeInterval(-Double(offset))
    }

    /// Digits only, `count` of them.
    static func digits(_ text: Substring, _ count: ClosedRange<Int>) throws(Refused) -> Int {
        guard count.contains(text.count), text.allSatisfy({ ("0"..."9").contains($0) }), let value = Int(text) else { throw Refused() }
        return value
    }

    // MARK: open-meteo

    static let openMeteoDefaults: [String: String] = [
        "temperature_2m": "3.4", "relative_humidity_2m": "61", "apparent_temperature": "-0.8", "weather_code": "61", "cloud_cover": "100",
        "pressure_msl": "1021.7", "wind_speed_10m": "3.9", "uv_index": "0.0",
    ]

    /// What `OpenMeteoProvider.parse` must answer for `openMeteo(fields, time:, offset:)`.
    static func expectedOpenMeteo(_ fields: [String: String] = [:], time: String = "\"2026-11-22T18:30\"", offset: String = "32400") -> Outcome {
        let values = openMeteoDefaults.merging(fields) { $1 }.mapValues(reading)
        let offsetReading = reading(offset)
        guard !values.values.contains(.unreadable), offsetReading != .unreadable, let timeReading = stringReading(time), let timeText = timeReading else {
            return .failure(.malformed)
        }
        do throws(Refused) {
            var offsetSeconds = 0
            if case .number(let x) = offsetReading { offsetSeconds = try code(x) }
            // `YYYY-M[M]-D[D]THH:MM[:SS]`, local time at the offset.
            let parts = timeText.split(separator: "T", omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw Refused() }
            let date = parts[0].split(separator: "-", omittingEmptySubsequences: false)
            let clock = parts[1].split(separator: ":", omittingEmptySubsequences: false)
            guard date.count == 3, clock.count == 2 || clock.count == 3 else { throw Refused() }
            let observedAt = try civilTime(
                try digits(date[0], 4...4), try digits(date[1], 1...2), try digits(date[2], 1...2), try digits(clock[0], 1...2),
                try digits(clock[1], 1...2), clock.count == 3 ? try digits(clock[2], 1...2) : 0, offset: offsetSeconds
            )
            func number(_ field: String) -> Double? {
                if case .number(let x) = values[field] { return x }
                return nil
            }
            let weatherCode = try code(number("weather_code"))
            let temperatureValue = try measured(number("temperature_2m"), temperature)
            return .observation(
                Observation(
                    weatherType: OpenMeteoProvider.weatherType(wmoCode: weatherCode),
                    temperature: temperatureValue,
                    // A missing apparent temperature is the measured one; a missing UV index is none.
                    feelsLike: try measured(number("apparent_temperature") ?? temperatureValue, feelsLike),
                    humidity: try measured(number("relative_humidity_2m"), percent),
                    pressure: try measured(number("pressure_msl"), pressure),
                    windSpeed: try measured(number("wind_speed_10m"), windSpeed),
                    uvIndex: try number("uv_index").map { v throws(Refused) in try measured(v, uvIndex) },
                    cloudiness: try measured(number("cloud_cover"), percent),
                    observedAt: observedAt
                )
            )
        } catch {
            return .failure(.implausible)
        }
    }

    static func openMeteo(_ fields: [String: String] = [:], time: String = "\"2026-11-22T18:30\"", offset: String = "32400") -> String {
        var current: [(String, String)] = [
            ("temperature_2m", "3.4"), ("relative_humidity_2m", "61"), ("apparent_temperature", "-0.8"), ("weather_code", "61"),
            ("cloud_cover", "100"), ("pressure_msl", "1021.7"), ("wind_speed_10m", "3.9"), ("uv_index", "0.0"),
        ]
        current = current.map { ($0.0, fields[$0.0] ?? $0.1) }
        let body = current.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",")
        return #"{"latitude":37.55,"longitude":127.0,"utc_offset_seconds":\#(offset),"current":{"time":\#(time),"interval":900,\#(body)}}"#
    }

    static let openMeteoFields = [
        "temperature_2m", "relative_humidity_2m", "apparent_temperature", "weather_code", "cloud_cover", "pressure_msl", "wind_speed_10m", "uv_index",
    ]

    @Test func openMeteoHumidity1e300IsRefused() {
        #expect(throws: ProviderError.self) { try OpenMeteoProvider.parse(Array(Self.openMeteo(["relative_humidity_2m": "1e300"]).utf8)) }
    }

    @Test func openMeteoImplausibleValuesAreRefused() {
        let cases: [(String, String)] = [
            ("relative_humidity_2m", "-3"), ("relative_humidity_2m", "100.5"), ("temperature_2m", "1e9"), ("temperature_2m", "-91"),
            ("pressure_msl", "0"), ("pressure_msl", "1200"), ("wind_speed_10m", "-5"), ("wind_speed_10m", "121"), ("uv_index", "1e300"),
            ("uv_index", "26"), ("cloud_cover", "101"), ("apparent_temperature", "1e300"), ("relative_humidity_2m", "null"),
            ("temperature_2m", "null"), ("weather_code", "61.5"), ("weather_code", "1e300"),
        ]
        for (field, value) in cases {
            #expect(Self.expectedOpenMeteo([field: value]) == .failure(.implausible), "\(field)=\(value)")
            Self.expect("open-meteo \(field)=\(value)", .failure(.implausible)) {
                try OpenMeteoProvider.parse(Array(Self.openMeteo([field: value]).utf8))
            }
        }
    }

    @Test func openMeteoRecordedAnswer() {
        let expected = Observation(
            weatherType: .rain, temperature: 3.4, feelsLike: -0.8, humidity: 61, pressure: 1021.7, windSpeed: 3.9, uvIndex: 0, cloudiness: 100,
            observedAt: Date(timeIntervalSince1970: 1_795_339_800)  // 2026-11-22T18:30 at +09:00
        )
        #expect(Self.expectedOpenMeteo() == .observation(expected))
        Self.expect("open-meteo as recorded", .observation(expected)) { try OpenMeteoProvider.parse(Array(Self.openMeteo().utf8)) }
    }

    @Test func openMeteoEveryFieldEveryHostileNumber() {
        for field in Self.openMeteoFields {
            for value in Self.hostileNumbers {
                Self.expect("open-meteo \(field)=\(value)", Self.expectedOpenMeteo([field: value])) {
                    try OpenMeteoProvider.parse(Array(Self.openMeteo([field: value]).utf8))
                }
            }
        }
        for value in Self.hostileNumbers {
            Self.expect("open-meteo utc_offset_seconds=\(value)", Self.expectedOpenMeteo(offset: value)) {
                try OpenMeteoProvider.parse(Array(Self.openMeteo(offset: value).utf8))
            }
        }
    }

    @Test func openMeteoHostileTimes() {
        let times = [
            "99999999999999999-01-01T00:00", "9223372036854775807-12-31T23:59", "-9223372036854775808-01-01T00:00", "0000-01-01T00:00",
            "1969-12-31T23:59", "1900-01-01T00:00", "2026-11-22T18:30:9223372036854775807", "2026-11-22T18:30:-5", "2026-02-31T00:00",
            "2026-13-01T00:00", "2026-11-22T24:00", "2026-11-22T18:60", "2026-11-22", "T", "", "2026-11-22T18:30:00:00", "+2026-11-22T18:30",
            "292277026596-12-04T15:30", "9999-12-31T23:59",
            // and times it takes:
            "2026-11-22T18:30:05", "2026-1-2T3:04", "2028-02-29T00:00", "2199-12-31T23:59:60",
        ]
        for time in times {
            Self.expect("open-meteo time=\(time)", Self.expectedOpenMeteo(time: "\"\(time)\"")) {
                try OpenMeteoProvider.parse(Array(Self.openMeteo(time: "\"\(time)\"").utf8))
            }
        }
        for value in Self.hostileNumbers {
            Self.expect("open-meteo time=\(value)", Self.expectedOpenMeteo(time: value)) { try OpenMeteoProvider.parse(Array(Self.openMeteo(time: value).utf8)) }
        }
    }

    /// A day the month does not have is refused, not read as the first days of the next month.
    @Test func daysTheMonthDoesNotHaveAreRefused() {
        for time in ["2026-02-29T00:00", "2026-02-31T12:00", "2026-04-31T00:00", "2100-02-29T00:00"] {
            #expect(OpenMeteoProvider.parseLocalTime(time) == nil, "\(time)")
            #expect(Self.expectedOpenMeteo(time: "\"\(time)\"") == .failure(.implausible))
        }
        #expect(OpenMeteoProvider.parseLocalTime("2028-02-29T00:00") == Date(timeIntervalSince1970: 1_835_395_200))
        #expect(KMAProvider.parseKST(date: "20260231", time: "0000") == nil)
        #expect(KMAProvider.parseKST(date: "20280229", time: "0900") == Date(timeIntervalSince1970: 1_835_395_200))
    }

    // MARK: OpenWeatherMap

    static func openWeatherMap(_ fields: [String: String] = [:], id: String = "802", icon: String = "\"03n\"") -> String {
        var current: [(String, String)] = [
            ("dt", "1795339800"), ("temp", "2.1"), ("feels_like", "-1.5"), ("pressure", "1024"), ("humidity", "55"), ("uvi", "0.3"),
            ("clouds", "40"), ("wind_speed", "3.6"),
        ]
        current = current.map { ($0.0, fields[$0.0] ?? $0.1) }
        let body = current.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",")
        return #"{"lat":37.5665,"lon":126.978,"current":{\#(body),"weather":[{"id":\#(id),"main":"Clouds","icon":\#(icon)}]}}"#
    }

    static let openWeatherMapDefaults: [String: String] = [
        "dt": "1795339800", "temp": "2.1", "feels_like": "-1.5", "pressure": "1024", "humidity": "55", "uvi": "0.3", "clouds": "40",
        "wind_speed": "3.6",
    ]

    /// What `OpenWeatherMapProvider.parse` must answer for `openWeatherMap(fields, id:, icon:)`.
    static func expectedOpenWeatherMap(_ fields: [String: String] = [:], id: String = "802", icon: String = "\"03n\"") -> Outcome {
        let values = openWeatherMapDefaults.merging(fields) { $1 }.mapValues(reading)
        let idReading = reading(id)
        guard !values.values.contains(.unreadable), idReading != .unreadable, let iconReading = stringReading(icon) else { return .failure(.malformed) }
        func number(_ field: String) -> Double? {
            if case .number(let x) = values[field] { return x }
            return nil
        }
        do throws(Refused) {
            // `dt`: seconds since 1970, within 2000-01-01…2200-01-01.
            guard let dt = number("dt"), dt.isFinite, (946_684_800...7_258_118_400).contains(dt) else { throw Refused() }
            var conditionID: Int?
            if case .number(let x) = idReading { conditionID = try code(x) }
            let temperatureValue = try measured(number("temp"), temperature)
            return .observation(
                Observation(
                    weatherType: OpenWeatherMapProvider.weatherType(icon: iconReading, id: conditionID),
                    temperature: temperatureValue,
                    feelsLike: try measured(number("feels_like") ?? temperatureValue, feelsLike),
                    humidity: try measured(number("humidity"), percent),
                    pressure: try measured(number("pressure"), pressure),
                    windSpeed: try measured(number("wind_speed"), windSpeed),
                    uvIndex: try number("uvi").map { v throws(Refused) in try measured(v, uvIndex) },
                    cloudiness: try measured(number("clouds"), percent),
                    observedAt: Date(timeIntervalSince1970: dt)
                )
            )
        } catch {
            return .failure(.implausible)
        }
    }

    @Test func openWeatherMapImplausibleValuesAreRefused() {
        let cases: [(String, String)] = [
            ("humidity", "1e300"), ("humidity", "-1"), ("temp", "1e9"), ("pressure", "0"), ("wind_speed", "-5"), ("uvi", "1e300"),
            ("clouds", "250"), ("dt", "-5"), ("dt", "9223372036854775807"), ("dt", "99999999999"), ("dt", "0"), ("humidity", "null"),
        ]
        for (field, value) in cases {
            #expect(Self.expectedOpenWeatherMap([field: value]) == .failure(.implausible), "\(field)=\(value)")
            Self.expect("openweathermap \(field)=\(value)", .failure(.implausible)) {
                try OpenWeatherMapProvider.parse(Array(Self.openWeatherMap([field: value]).utf8))
            }
        }
    }

    @Test func openWeatherMapEveryFieldEveryHostileNumber() {
        for field in ["dt", "temp", "feels_like", "pressure", "humidity", "uvi", "clouds", "wind_speed"] {
            for value in Self.hostileNumbers {
                Self.expect("openweathermap \(field)=\(value)", Self.expectedOpenWeatherMap([field: value])) {
                    try OpenWeatherMapProvider.parse(Array(Self.openWeatherMap([field: value]).utf8))
                }
            }
        }
        for value in Self.hostileNumbers {
            Self.expect("openweathermap id=\(value)", Self.expectedOpenWeatherMap(id: value)) {
                try OpenWeatherMapProvider.parse(Array(Self.openWeatherMap(id: value).utf8))
            }
            Self.expect("openweathermap icon=\(value)", Self.expectedOpenWeatherMap(icon: value)) {
                try OpenWeatherMapProvider.parse(Array(Self.openWeatherMap(icon: value).utf8))
            }
        }
    }

    // MARK: KMA

    static func kma(nowcast values: [String: String] = [:], forecast: [String: String] = [:], baseDate: String = "20261122", baseTime: String = "1800")
        -> (nowcast: [UInt8], forecast: [UInt8])
    {
        let observed = [("PTY", "0"), ("REH", "70"), ("RN1", "강수없음"), ("T1H", "4.5"), ("WSD", "2.1")].map { ($0.0, values[$0.0] ?? $0.1) }
        let predicted = [("SKY", "1"), ("LGT", "0")].map { ($0.0, forecast[$0.0] ?? $0.1) }
        func json(_ text: String) -> String {
            let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return "\"\(escaped)\""
        }
        let nowItems = observed.map {
            #"{"baseDate":\#(json(baseDate)),"baseTime":\#(json(baseTime)),"category":"\#($0.0)","nx":60,"ny":127,"obsrValue":\#(json($0.1))}"#
        }
        let fcstItems = predicted.map {
            #"{"baseDate":"20261122","baseTime":"1730","category":"\#($0.0)","fcstDate":"20261122","fcstTime":"1800","fcstValue":\#(json($0.1)),"nx":60,"ny":127}"#
        }
        func envelope(_ items: [String]) -> [UInt8] {
            Array(#"{"response":{"header":{"resultCode":"00","resultMsg":"NORMAL_SERVICE"},"body":{"dataType":"JSON","items":{"item":[\#(items.joined(separator: ","))]}}}}"#.utf8)
        }
        return (envelope(nowItems), envelope(fcstItems))
    }

    /// What `KMAProvider.parse` must answer for `kma(nowcast:forecast:baseDate:baseTime:)`. KMA sends every value as
    /// text; a number is that text, trimmed, read by `Double(_:)`.
    static func expectedKMA(nowcast: [String: String] = [:], forecast: [String: String] = [:], baseDate: String = "20261122", baseTime: String = "1800")
        -> Outcome
    {
        let observed = ["PTY": "0", "REH": "70", "RN1": "강수없음", "T1H": "4.5", "WSD": "2.1"].merging(nowcast) { $1 }
        let predicted = ["SKY": "1", "LGT": "0"].merging(forecast) { $1 }
        func number(_ text: String?) -> Double? { text.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } }
        do throws(Refused) {
            let temperatureValue = try measured(number(observed["T1H"]), temperature)
            let humidity = try measured(number(observed["REH"]), percent)
            let wind = try measured(number(observed["WSD"]), windSpeed)
            let pty = try code(number(observed["PTY"]))
            let sky = try code(number(predicted["SKY"]))
            guard let lightning = number(predicted["LGT"]), lightning.isFinite else { throw Refused() }
            // `YYYYMMDD` and `HHMM`, Korean time (UTC+9).
            let date = try digits(Substring(baseDate), 8...8)
            let time = try digits(Substring(baseTime), 4...4)
            let observedAt = try civilTime(date / 10_000, date / 100 % 100, date % 100, time / 100, time % 100, offset: 9 * 3600)
            let apparent = Units.round(KMAProvider.apparentTemperature(celsius: temperatureValue, humidity: humidity, wind: wind))
            let cloudiness: Double = [1: 20, 3: 70, 4: 95][sky] ?? 0
            return .observation(
                Observation(
                    weatherType: KMAProvider.weatherType(pty: pty, sky: sky, lightning: lightning), temperature: temperatureValue,
                    feelsLike: try measured(apparent, feelsLike), humidity: humidity, pressure: nil, windSpeed: wind, uvIndex: nil,
                    cloudiness: cloudiness, observedAt: observedAt
                )
            )
        } catch {
            return .failure(.implausible)
        }
    }

    @Test func kmaImplausibleValuesAreRefused() {
        let cases: [(String, String)] = [
            ("REH", "1e300"), ("REH", "nan"), ("REH", "-3"), ("T1H", "inf"), ("T1H", "1e9"), ("WSD", "-5"), ("WSD", "nan"), ("PTY", "1e300"),
            ("PTY", "nan"),
        ]
        for (category, value) in cases {
            let bodies = Self.kma(nowcast: [category: value])
            #expect(Self.expectedKMA(nowcast: [category: value]) == .failure(.implausible), "\(category)=\(value)")
            Self.expect("kma \(category)=\(value)", .failure(.implausible)) { try KMAProvider.parse(nowcast: bodies.nowcast, forecast: bodies.forecast) }
        }
        for value in ["1e300", "nan", "-inf"] {
            let bodies = Self.kma(forecast: ["SKY": value])
            Self.expect("kma SKY=\(value)", .failure(.implausible)) { try KMAProvider.parse(nowcast: bodies.nowcast, forecast: bodies.forecast) }
        }
    }

    @Test func kmaEveryCategoryEveryHostileText() {
        for category in ["PTY", "REH", "T1H", "WSD"] {
            for value in Self.hostileTexts {
                let bodies = Self.kma(nowcast: [category: value])
                Self.expect("kma \(category)=\(value)", Self.expectedKMA(nowcast: [category: value])) {
                    try KMAProvider.parse(nowcast: bodies.nowcast, forecast: bodies.forecast)
                }
            }
        }
        for category in ["SKY", "LGT"] {
            for value in Self.hostileTexts {
                let bodies = Self.kma(forecast: [category: value])
                Self.expect("kma \(category)=\(value)", Self.expectedKMA(forecast: [category: value])) {
                    try KMAProvider.parse(nowcast: bodies.nowcast, forecast: bodies.forecast)
                }
            }
        }
    }

    @Test func kmaHostileBaseTimes() {
        let dates = [
            "99999999", "-1234567", "20261332", "20260231", "00000101", "19691231", "2026112", "2026-1-1", "+2026112", "        ",
            "20261122", "20280229",
        ]
        let times = ["9999", "2460", "-100", "0000", "+100", "12:0", "1800", "2359"]
        for date in dates {
            for time in times {
                let bodies = Self.kma(baseDate: date, baseTime: time)
                Self.expect("kma base \(date) \(time)", Self.expectedKMA(baseDate: date, baseTime: time)) {
                    try KMAProvider.parse(nowcast: bodies.nowcast, forecast: bodies.forecast)
                }
            }
        }
    }

    /// Whatever the clock says, the base date and time asked for are KMA's format: the clock is first clamped to
    /// 2000-01-01T00:00…2199-12-31T23:59:59 KST (a clock that is not finite counts as the start), then the forecast
    /// asks for the half hour 45 minutes before, the nowcast for the hour 40 minutes before.
    @Test func kmaBaseTimeOfAnyClock() {
        for seconds in [-1e300, -9.3e18, -1e12, -1, 0, .infinity, -.infinity, .nan] {
            let base = KMAProvider.baseDateTime(now: Date(timeIntervalSince1970: seconds), forecast: true)
            #expect(base.date == "19991231" && base.time == "2330", "\(seconds): \(base)")
        }
        for seconds in [1e12, 9.3e18, 1e300] {
            let base = KMAProvider.baseDateTime(now: Date(timeIntervalSince1970: seconds), forecast: true)
            #expect(base.date == "21991231" && base.time == "2330", "\(seconds): \(base)")
        }
        // 2026-11-22T09:30Z is 18:30 KST.
        let now = Date(timeIntervalSince1970: 1_795_339_800)
        let nowcast = KMAProvider.baseDateTime(now: now, forecast: false)
        #expect(nowcast.date == "20261122" && nowcast.time == "1700")
        let forecast = KMAProvider.baseDateTime(now: now, forecast: true)
        #expect(forecast.date == "20261122" && forecast.time == "1730")
    }

    /// Seoul is KMA's grid point (60, 127); a coordinate that is not finite, or a pole, is (0, 0), outside the grid.
    @Test func kmaGridOfAnyCoordinate() {
        #expect(KMAGrid.point(lat: 37.5665, lon: 126.978) == .init(nx: 60, ny: 127))
        for lat in [-90.0, 90, 1e300, -1e300, .nan, .infinity, 37.5] {
            for lon in [-180.0, 180, 1e300, .nan, -.infinity, 127] {
                let point = KMAGrid.point(lat: lat, lon: lon)
                if !lat.isFinite || !lon.isFinite {
                    #expect(point == .init(nx: 0, ny: 0), "\(lat), \(lon): \(point)")
                } else {
                    #expect(abs(point.nx) < 1_000_000 && abs(point.ny) < 1_000_000, "\(lat), \(lon): \(point)")
                }
            }
        }
    }

    // MARK: Random bodies

    /// A random number as JSON text: often in a plausible range, often huge or tiny, sometimes not a number.
    static func randomNumber(_ rng: inout Xoshiro) -> String {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: return String(Double.random(in: -200...1200, using: &rng))
        case 1: return String(Int64.random(in: .min ... .max, using: &rng))
        case 2: return "\(Double.random(in: -10...10, using: &rng))e\(Int.random(in: -400...400, using: &rng))"
        case 3: return String(Double(bitPattern: rng.next()))
        case 4: return hostileNumbers.randomElement(using: &rng) ?? "0"
        default: return String(Int.random(in: -10...110, using: &rng))
        }
    }

    @Test func randomBodiesGiveWhatTheRulesSay() {
        var rng = Xoshiro(seed: (0x5EED_0013, 1, 2, 3))  // seeded: a failure names a reproducible case
        var observations = 0
        for round in 0..<3000 {
            var fields: [String: String] = [:]
            for field in Self.openMeteoFields where Bool.random(using: &rng) {
                fields[field] = Self.randomNumber(&rng)
            }
            let offset = Bool.random(using: &rng) ? Self.randomNumber(&rng) : "32400"
            let openMeteo = Self.expectedOpenMeteo(fields, offset: offset)
            Self.expect("open-meteo #\(round) \(fields) offset=\(offset)", openMeteo) {
                try OpenMeteoProvider.parse(Array(Self.openMeteo(fields, offset: offset).utf8))
            }

            var owm: [String: String] = [:]
            for field in ["dt", "temp", "feels_like", "pressure", "humidity", "uvi", "clouds", "wind_speed"] where Bool.random(using: &rng) {
                owm[field] = Self.randomNumber(&rng)
            }
            let id = Bool.random(using: &rng) ? Self.randomNumber(&rng) : "802"
            let openWeatherMap = Self.expectedOpenWeatherMap(owm, id: id)
            Self.expect("openweathermap #\(round) \(owm) id=\(id)", openWeatherMap) {
                try OpenWeatherMapProvider.parse(Array(Self.openWeatherMap(owm, id: id).utf8))
            }

            var now: [String: String] = [:]
            for category in ["PTY", "REH", "T1H", "WSD"] where Bool.random(using: &rng) {
                now[category] = Self.randomNumber(&rng)
            }
            var forecast: [String: String] = [:]
            for category in ["SKY", "LGT"] where Bool.random(using: &rng) {
                forecast[category] = Self.randomNumber(&rng)
            }
            let bodies = Self.kma(nowcast: now, forecast: forecast)
            let kma = Self.expectedKMA(nowcast: now, forecast: forecast)
            Self.expect("kma #\(round) \(now) \(forecast)", kma) { try KMAProvider.parse(nowcast: bodies.nowcast, forecast: bodies.forecast) }
            for outcome in [openMeteo, openWeatherMap, kma] {
                if case .observation = outcome { observations += 1 }
            }
        }
        // The bodies reach both ends: most are refused, some are read (339 of 9000 with this seed).
        #expect(observations > 100 && observations < 8900, "\(observations) observations of 9000")
    }
}
