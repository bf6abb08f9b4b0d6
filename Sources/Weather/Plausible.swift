import CivilTime
import Foundation

/// The one gate through which numbers from outside — a provider's answer, a row of `weather_cache` — become
/// values the board uses (CONTRACT §6). Every function here is total: a missing, non-finite or implausible value
/// is a thrown `ProviderError` (kind `.implausible`) or a nil, never a trap, so a hostile or broken provider can
/// at worst make its answer a provider failure (the stale value, or 503 `weather_unavailable`).
///
/// The parsers (open-meteo, OpenWeatherMap, KMA) read every number through `value`/`optionalValue`/`code`/
/// `epochSeconds`; `WeatherService` checks each whole observation again with `check(_:now:)` before using or
/// caching it, and each row it reads back from `weather_cache`.
public enum Plausible {
    /// A measured quantity and the range the contract believes (metric units).
    public enum Quantity: String, Sendable, CaseIterable {
        case temperature, feelsLike, humidity, cloudiness, pressure, windSpeed, uvIndex

        /// CONTRACT §6: temperature −90…60 °C, humidity and cloudiness 0…100 %, sea-level pressure 850…1100 hPa,
        /// wind 0…120 m/s, UV index 0…25. The apparent temperature is derived (wind chill, humidity), so it may
        /// go a little past the measured one: −130…100 °C.
        public var range: ClosedRange<Double> {
            switch self {
            case .temperature: return -90...60
            case .feelsLike: return -130...100
            case .humidity, .cloudiness: return 0...100
            case .pressure: return 850...1100
            case .windSpeed: return 0...120
            case .uvIndex: return 0...25
            }
        }
    }

    /// An observation more than this far in the future (of the server's clock) is refused.
    public static let maxFutureSkew: TimeInterval = 86_400
    /// A fresh provider answer observed longer ago than this is not current weather (a provider serving a stuck or
    /// replayed answer): refused like an implausible value. Cached rows may be older (they are served as stale).
    public static let maxObservationAge: TimeInterval = 86_400
    /// How far ahead of this instance's clock a `weather_cache.fetched_at` may be (another instance's clock): a row
    /// stamped further ahead would count as fresh, and block fresher rows, until that time.
    public static let maxClockSkew: TimeInterval = 300
    /// The earliest observation (or fetch) time believed: 2000-01-01T00:00:00Z. Anything before, negative
    /// times included, is absurd.
    public static let earliest = Date(timeIntervalSince1970: 946_684_800)
    /// The latest time any parser turns into a date, before the check against the clock: 2200-01-01T00:00:00Z.
    public static let latest = Date(timeIntervalSince1970: 7_258_118_400)
    /// Years a provider's civil date may name.
    static let years: ClosedRange<Int64> = 2000...2199

    static func implausible(_ what: String) -> ProviderError {
        ProviderError(.implausible, what)
    }

    /// A reported number: present, finite and in the quantity's range.
    public static func value(_ raw: Double?, _ quantity: Quantity, source: String) throws -> Double {
        guard let raw else { throw implausible("\(source): \(quantity.rawValue) is missing") }
        return try checked(raw, quantity, source: source)
    }

    /// A number a provider may leave out (UV index): nil stays nil, anything present must be plausible.
    public static func optionalValue(_ raw: Double?, _ quantity: Quantity, source: String) throws -> Double? {
        guard let raw else { return nil }
        return try checked(raw, quantity, source: source)
    }

    private static func checked(_ raw: Double, _ quantity: Quantity, source: String) throws -> Double {
        guard raw.isFinite else { throw implausible("\(source): \(quantity.rawValue) is not finite") }
        guard quantity.range.contains(raw) else {
            throw implausible("\(source): \(quantity.rawValue) \(raw) is outside \(quantity.range.lowerBound)…\(quantity.range.upperBound)")
        }
        return raw
    }

    /// A provider's code (WMO weather code, OpenWeatherMap condition id, KMA PTY/SKY): nil unless finite,
    /// integral and within ±1,000,000, so it can index or switch without trapping.
    public static func code(_ raw: Double?) -> Int? {
        guard let raw, raw.isFinite, raw == raw.rounded(), abs(raw) <= 1_000_000 else { return nil }
        return Int(raw)
    }

    /// Seconds since 1970 of a civil date and time in some zone `offsetSeconds` east of UTC, or nil when a part is
    /// out of range (year 2000…2199, month 1…12, a day the month has, hour 0…23, minute 0…59, second 0…60, offset
    /// ±18 h). The arithmetic cannot overflow within those ranges.
    public static func epochSeconds(
        year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64 = 0, offsetSeconds: Int64 = 0
    ) -> Int64? {
        guard years.contains(year), (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour),
            (0...59).contains(minute), (0...60).contains(second), (-64_800...64_800).contains(offsetSeconds)
        else { return nil }
        let days = CivilDate.days(year: year, month: month, day: day)
        // February 31 would come back as March 3.
        guard CivilDate.date(days: days) == (year, month, day) else { return nil }
        return days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
    }

    /// A provider's Unix time (OpenWeatherMap `dt`) as a date, or nil outside `earliest`…`latest`.
    public static func date(unixSeconds raw: Double?) -> Date? {
        guard let raw, raw.isFinite, raw >= earliest.timeIntervalSince1970, raw <= latest.timeIntervalSince1970 else { return nil }
        return Date(timeIntervalSince1970: raw)
    }

    /// An observation or fetch time: finite, not before `earliest`, not more than `ahead` after `now` and, with
    /// `maxAge`, not more than that before it.
    public static func time(
        _ date: Date, now: Date, source: String, field: String = "observation time", ahead: TimeInterval = maxFutureSkew, maxAge: TimeInterval? = nil
    ) throws {
        let t = date.timeIntervalSince1970
        guard t.isFinite, t >= earliest.timeIntervalSince1970 else { throw implausible("\(source): \(field) \(t) is absurd") }
        guard date.timeIntervalSince(now) <= ahead else {
            throw implausible("\(source): \(field) \(t) is more than \(Int(ahead)) s ahead of now")
        }
        if let maxAge, now.timeIntervalSince(date) > maxAge {
            throw implausible("\(source): \(field) \(t) is more than \(Int(maxAge)) s old")
        }
    }

    /// The whole observation, as `WeatherService` uses and caches it: every value plausible and the observation
    /// time not more than a day from `now`. Returns it unchanged, or throws `ProviderError` (`.implausible`).
    @discardableResult
    public static func check(_ o: Observation, now: Date, source: String, maxAge: TimeInterval? = nil) throws -> Observation {
        _ = try checked(o.temperature, .temperature, source: source)
        _ = try checked(o.feelsLike, .feelsLike, source: source)
        _ = try checked(o.humidity, .humidity, source: source)
        _ = try checked(o.cloudiness, .cloudiness, source: source)
        _ = try optionalValue(o.pressure, .pressure, source: source)
        _ = try checked(o.windSpeed, .windSpeed, source: source)
        _ = try optionalValue(o.uvIndex, .uvIndex, source: source)
        try time(o.observedAt, now: now, source: source, maxAge: maxAge)
        return o
    }

    /// A percentage for display, rounded to a whole number; clamps (and maps NaN to 0) instead of trapping, though
    /// a checked observation never needs it to.
    static func wholePercent(_ value: Double) -> Int {
        guard value.isFinite else { return 0 }
        return Int(min(100, max(0, value)).rounded())
    }
}
