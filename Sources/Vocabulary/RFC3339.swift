import CivilTime
import Foundation

/// Times on the wire (CONTRACT §1): RFC 3339 in UTC with `Z`, to the second (`2026-11-22T09:30:00Z`).
/// The calendar arithmetic is `CivilDate`'s (module `CivilTime`), the one copy `Database` uses too.
public enum RFC3339 {
    public static func format(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        write(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the 20 bytes of `format(date)` to `bytes`. Inlinable: `JSONWriter` calls it for every time it writes.
    @inlinable
    public static func write(_ date: Date, to bytes: inout [UInt8]) {
        // Total for any date: clamped to 0000-01-01T00:00:00Z…9999-12-31T23:59:59Z (NaN → the epoch), so a
        // four-digit year always fits and no conversion traps, whatever a caller passes.
        let raw = date.timeIntervalSince1970
        let bounded = raw.isNaN ? 0 : min(max(raw.rounded(.down), -62_167_219_200), 253_402_300_799)
        let (days, seconds) = CivilDate.split(seconds: Int64(bounded))
        let (year, month, day) = CivilDate.date(days: days)
        // Written into a stack buffer and appended once: `YYYY-MM-DDTHH:MM:SSZ` is always 20 bytes.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { out in
            func put(_ value: Int64, at start: Int, width: Int) {
                var v = value
                for i in stride(from: start + width - 1, through: start, by: -1) {
                    out[i] = UInt8(48 + v % 10)
                    v /= 10
                }
            }
            put(year, at: 0, width: 4)
            out[4] = UInt8(ascii: "-")
            put(month, at: 5, width: 2)
            out[7] = UInt8(ascii: "-")
            put(day, at: 8, width: 2)
            out[10] = UInt8(ascii: "T")
            put(seconds / 3600, at: 11, width: 2)
            out[13] = UInt8(ascii: ":")
            put(seconds / 60 % 60, at: 14, width: 2)
            out[16] = UInt8(ascii: ":")
            put(seconds % 60, at: 17, width: 2)
            out[19] = UInt8(ascii: "Z")
            bytes.append(contentsOf: UnsafeBufferPointer(out))
        }
    }

    /// An RFC 3339 `date-time` (§5.6): `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, `T` and `Z` in either case, a
    /// leap second `60` allowed; nil for anything else, a day the month does not have included.
    public static func parse(_ text: some StringProtocol) -> Date? {
        let s = Array(text.utf8)
        guard s.count >= 20 else { return nil }
        func digits(_ at: Int, _ count: Int) -> Int64? {
            guard at + count <= s.count else { return nil }
            var value: Int64 = 0
            for byte in s[at..<at + count] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        guard let year = digits(0, 4), s[4] == UInt8(ascii: "-"), let month = digits(5, 2), s[7] == UInt8(ascii: "-"),
            let day = digits(8, 2), s[10] | 0x20 == UInt8(ascii: "t"), let hour = digits(11, 2), s[13] == UInt8(ascii: ":"),
            let minute = digits(14, 2), s[16] == UInt8(ascii: ":"), let second = digits(17, 2),
            (1...12).contains(month), (1...31).contains(day), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        // The day must exist: February 30 would come back as March 2.
        let days = CivilDate.days(year: year, month: month, day: day)
        guard CivilDate.date(days: days) == (year, month, day) else { return nil }
        var i = 19
        var fraction = 0.0
        if s[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            let start = i
            while i < s.count, s[i] >= 48, s[i] <= 57 {
                fraction += Double(s[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset: Int64 = 0
        guard i < s.count else { return nil }
        if s[i] | 0x20 == UInt8(ascii: "z") {
            i += 1
        } else {
            guard s[i] == UInt8(ascii: "+") || s[i] == UInt8(ascii: "-"), let oh = digits(i + 1, 2), s.count > i + 3,
                s[i + 3] == UInt8(ascii: ":"), let om = digits(i + 4, 2), oh <= 23, om <= 59
            else { return nil }
            offset = (oh * 3600 + om * 60) * (s[i] == UInt8(ascii: "+") ? 1 : -1)
            i += 6
        }
        guard i == s.count else { return nil }
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }
}
