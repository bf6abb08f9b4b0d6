import CivilTime
import Foundation

/// Fast conversion between `Date` and PostgreSQL's ISO text for `timestamptz`. Every connection runs with
/// `TimeZone = 'UTC'` and `DateStyle = 'ISO'`, so the server writes `2026-11-22 09:30:00.123456+00`.
enum PostgresTimestamp {
    /// Total: a date past what microseconds in 64 bits hold (or not finite) is PostgreSQL's `infinity` or
    /// `-infinity`, never a trap.
    static func format(_ date: Date) -> String {
        let totalMicros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard var micros = Int64(exactly: totalMicros) else { return totalMicros < 0 ? "-infinity" : "infinity" }
        var seconds = micros / 1_000_000
        micros %= 1_000_000
        if micros < 0 {
            micros += 1_000_000
            seconds -= 1
        }
        let (days, secondOfDay) = CivilDate.split(seconds: seconds)
        let (y, m, d) = CivilDate.date(days: days)
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secondOfDay / 3600, 2)):\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(micros, 6))Z"
    }

    /// Parses `YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM[:SS]]]` (also with `T`, `Z`).
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// The same, straight from the bytes of a result cell.
    static func parse(bytes s: UnsafeRawBufferPointer) -> Date? {
        var i = 0
        func number(_ count: Int) -> Int64? {
            guard s.count - i >= count else { return nil }
            var v: Int64 = 0
            for _ in 0..<count {
                let c = s[i]
                guard c >= 48, c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
                i += 1
            }
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < s.count, s[i] == c else { return false }
            i += 1
            return true
        }
        guard let y = number(4), expect(45), let mo = number(2), expect(45), let d = number(2) else { return nil }
        guard i < s.count, s[i] == 32 || s[i] == 84 else { return nil }
        i += 1
        guard let h = number(2), expect(58), let mi = number(2), expect(58), let sec = number(2) else { return nil }
        var micros: Int64 = 0
        if expect(46) {
            var digits = 0
            while i < s.count, s[i] >= 48, s[i] <= 57 {
                if digits < 6 {
                    micros = micros * 10 + Int64(s[i] - 48)
                    digits += 1
                }
                i += 1
            }
            while digits < 6 {
                micros *= 10
                digits += 1
            }
        }
        var offset: Int64 = 0
        if i < s.count {
            let c = s[i]
            if c == 90 {
                i += 1
            } else if c == 43 || c == 45 {
                i += 1
                guard let oh = number(2) else { return nil }
                var om: Int64 = 0
                var os: Int64 = 0
                if expect(58) { om = number(2) ?? 0 }
                if expect(58) { os = number(2) ?? 0 }
                offset = (oh * 3600 + om * 60 + os) * (c == 43 ? 1 : -1)
            } else {
                return nil
            }
        }
        guard i == s.count else { return nil }
        let days = CivilDate.days(year: y, month: mo, day: d)
        let seconds = days * 86_400 + h * 3600 + mi * 60 + sec - offset
        return Date(timeIntervalSince1970: Double(seconds) + Double(micros) / 1_000_000)
    }
}
