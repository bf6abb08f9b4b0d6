import Board
import Foundation
import Testing

/// When the daily briefing fires (CONTRACT §14): on the device's wall clock and calendar, whatever the server's zone,
/// across DST gaps (the next minute that exists) and overlaps (once, at the first).
@Suite("Briefing schedule")
struct BriefingScheduleTests {
    /// Seconds since 1970 of an RFC 3339 UTC time.
    static func utc(_ text: String) -> Int64 {
        let formatter = ISO8601DateFormatter()
        return Int64(formatter.date(from: text)!.timeIntervalSince1970)
    }

    static func schedule(_ time: String, _ days: [Weekday] = Weekday.allCases, _ zone: String) -> BriefingSchedule {
        BriefingSchedule(time: LocalTime(parsing: time)!, days: days, timeZone: TimeZone(identifier: zone)!)
    }

    @Test("07:00 in Seoul is 22:00 UTC the day before; days are the device's, not UTC's")
    func seoul() {
        let everyDay = Self.schedule("07:00", Weekday.allCases, "Asia/Seoul")
        // Saturday 09:00 in Seoul: today's has gone, so Sunday's.
        #expect(everyDay.next(atOrAfter: Self.utc("2026-11-28T00:00:00Z"))?.fire == Self.utc("2026-11-28T22:00:00Z"))
        // Mondays only: Monday 07:00 in Seoul, a Sunday in UTC.
        let mondays = Self.schedule("07:00", [.mon], "Asia/Seoul")
        #expect(mondays.next(atOrAfter: Self.utc("2026-11-28T00:00:00Z"))?.fire == Self.utc("2026-11-29T22:00:00Z"))
        // At the very second: it fires then.
        #expect(mondays.next(atOrAfter: Self.utc("2026-11-29T22:00:00Z"))?.fire == Self.utc("2026-11-29T22:00:00Z"))
        #expect(mondays.next(atOrAfter: Self.utc("2026-11-29T22:00:01Z"))?.fire == Self.utc("2026-12-06T22:00:00Z"))
        #expect(Self.schedule("07:00", [], "Asia/Seoul").next(atOrAfter: 0) == nil)
    }

    @Test("a time the spring-forward night skips fires at the next minute that exists (New York 02:30 → 03:00; Lord Howe's half-hour shift)")
    func springForwardGap() {
        let newYork = Self.schedule("02:30", Weekday.allCases, "America/New_York")
        #expect(newYork.next(atOrAfter: Self.utc("2026-03-08T00:00:00Z"))?.fire == Self.utc("2026-03-08T07:00:00Z"))
        // The day after, 02:30 exists again (EDT).
        #expect(newYork.next(atOrAfter: Self.utc("2026-03-08T07:00:01Z"))?.fire == Self.utc("2026-03-09T06:30:00Z"))
        let lordHowe = Self.schedule("02:15", Weekday.allCases, "Australia/Lord_Howe")
        #expect(lordHowe.next(atOrAfter: Self.utc("2026-10-03T12:00:00Z"))?.fire == Self.utc("2026-10-03T15:30:00Z"))
    }

    @Test("a time the fall-back night has twice fires once, at the first; the next is the next day's")
    func fallBackOverlap() {
        let newYork = Self.schedule("01:30", Weekday.allCases, "America/New_York")
        let first = newYork.next(atOrAfter: Self.utc("2026-11-01T00:00:00Z"))
        #expect(first?.fire == Self.utc("2026-11-01T05:30:00Z"))
        let after = newYork.next(atOrAfter: Self.utc("2026-11-01T05:31:00Z"))
        #expect(after?.fire == Self.utc("2026-11-02T06:30:00Z"), "not 06:30Z on the 1st: that is 01:30 again, the same local day")
        #expect(after?.localDay == (first?.localDay ?? 0) + 1)
    }

    @Test("over 20 zones and 2,000 instants: never early, within a week, on a chosen local weekday, at the chosen wall time unless a gap moved it")
    func properties() {
        let zones = [
            "Asia/Seoul", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Pacific/Chatham", "Pacific/Kiritimati",
            "Pacific/Pago_Pago", "America/Santiago", "Asia/Kathmandu", "Africa/Casablanca", "America/St_Johns", "Europe/London",
            "Asia/Tehran", "Australia/Adelaide", "America/Havana", "UTC", "Europe/Dublin", "Antarctica/Troll", "America/Sao_Paulo",
            "Pacific/Auckland",
        ]
        var generator = SystemRandomNumberGenerator()
        for index in 0..<2_000 {
            let zone = TimeZone(identifier: zones[index % zones.count])!
            let minutes = Int.random(in: 0..<1440, using: &generator)
            let days = Weekday.allCases.filter { _ in Bool.random(using: &generator) }
            let schedule = BriefingSchedule(time: LocalTime(minutes: minutes)!, days: days, timeZone: zone)
            let instant = Int64.random(in: Self.utc("2020-01-01T00:00:00Z")...Self.utc("2035-01-01T00:00:00Z"), using: &generator)
            guard let (fire, localDay) = schedule.next(atOrAfter: instant) else {
                #expect(days.isEmpty)
                continue
            }
            #expect(fire >= instant)
            #expect(fire - instant <= 8 * 86_400, "\(zone.identifier) at \(instant)")
            let wall = fire + Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(fire))))
            let wallDay = wall >= 0 ? wall / 86_400 : (wall - 86_399) / 86_400
            let weekday = Weekday.allCases[Int(((wallDay + 3) % 7 + 7) % 7)]
            let wallMinutes = Int((wall - wallDay * 86_400) / 60)
            if wallMinutes == minutes {
                #expect(wallDay == localDay)
                #expect(days.contains(weekday), "\(zone.identifier): \(weekday)")
            } else {
                // Moved by a gap: the offset changed within the few hours before.
                let before = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(fire - 3 * 3600)))
                #expect(before != zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(fire))), "\(zone.identifier) \(fire): \(wallMinutes) not \(minutes)")
            }
        }
    }
}
