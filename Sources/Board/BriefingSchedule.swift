import CivilTime
import Foundation

/// When a device's daily briefing fires (CONTRACT §14): at `time` on each of `days`, both read on the device's wall
/// clock in its own time zone, never the server's. Across a DST change a time that does not exist that day fires at
/// the next minute that does (02:30 on a spring-forward night fires at 03:00), and one that occurs twice fires at the
/// first (the scheduler then asks from after it, and the second is the same local day: skipped).
public struct BriefingSchedule: Sendable {
    public let time: LocalTime
    public let days: Set<Weekday>
    public let timeZone: TimeZone

    public init(time: LocalTime, days: [Weekday], timeZone: TimeZone) {
        self.time = time
        self.days = Set(days)
        self.timeZone = timeZone
    }

    /// The first firing at or after `instant` (seconds since 1970), and the local day it belongs to (days since
    /// 1970-01-01 on the device's calendar: a briefing goes once per local day). Nil when no day is chosen.
    public func next(atOrAfter instant: Int64) -> (fire: Int64, localDay: Int64)? {
        guard !days.isEmpty else { return nil }
        let (today, _) = CivilDate.split(seconds: instant + Int64(timeZone.secondsFromGMT(for: Self.date(instant))))
        // A week and a day: every weekday is seen, and the day before today covers a zone far behind `instant`'s day.
        for localDay in (today - 1)...(today + 8) where days.contains(Self.weekday(ofDay: localDay)) {
            let fire = firing(onLocalDay: localDay)
            if fire >= instant { return (fire, localDay) }
        }
        return nil
    }

    /// The instant the briefing fires on `localDay`: the first instant whose wall clock reads `time` that day, or,
    /// when that day's clock skips `time`, the first minute after it that exists.
    func firing(onLocalDay localDay: Int64) -> Int64 {
        let wall = localDay * 86_400 + Int64(time.minutes) * 60
        if let first = instants(ofWall: wall).min() { return first }
        // In a gap (at most a few hours anywhere): the next wall minute that exists.
        var next = wall + 60
        while next < wall + 86_400 {
            if let first = instants(ofWall: next).min() { return first }
            next += 60
        }
        return wall - Int64(timeZone.secondsFromGMT(for: Self.date(wall)))
    }

    /// Every instant whose wall clock in `timeZone` reads `wall` (local seconds since 1970 as if UTC): none in a
    /// spring-forward gap, two in a fall-back overlap, else one.
    func instants(ofWall wall: Int64) -> [Int64] {
        // The offsets in force around that day; each one that maps back to `wall` names an instant.
        let offsets = Set([-86_400, -43_200, 0, 43_200, 86_400].map { Int64(timeZone.secondsFromGMT(for: Self.date(wall + Int64($0)))) })
        return offsets.map { wall - $0 }.filter { Int64(timeZone.secondsFromGMT(for: Self.date($0))) == wall - $0 }
    }

    /// The weekday of a day count since 1970-01-01 (a Thursday).
    static func weekday(ofDay day: Int64) -> Weekday {
        let index = ((day + 3) % 7 + 7) % 7
        return Weekday.allCases[Int(index)]
    }

    static func date(_ seconds: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(seconds)) }
}
