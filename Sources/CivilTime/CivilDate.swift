/// Proleptic Gregorian calendar arithmetic without `Calendar` (Howard Hinnant's algorithms): fast, locale-free,
/// and the only copy in the package. `Database` (PostgreSQL's timestamp text) and `Vocabulary` (RFC 3339, provider
/// dates) both use it, which is why it sits in its own dependency-free module below both.
///
/// Callers keep the inputs in a sane range (years within ±10⁹, day counts within ±10¹¹): the arithmetic is plain
/// `Int64` and is exact there.
public enum CivilDate {
    /// Days since 1970-01-01 of a date (month 1…12, day 1…31).
    @inlinable
    public static func days(year y0: Int64, month m: Int64, day d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Year, month (1…12) and day (1…31) of a count of days since 1970-01-01.
    @inlinable
    public static func date(days z0: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    /// Splits seconds since 1970 into whole days and the second of the day (0…86 399), flooring negative times.
    @inlinable
    public static func split(seconds: Int64) -> (days: Int64, secondOfDay: Int64) {
        var days = seconds / 86_400
        var second = seconds - days * 86_400
        if second < 0 {
            second += 86_400
            days -= 1
        }
        return (days, second)
    }
}
