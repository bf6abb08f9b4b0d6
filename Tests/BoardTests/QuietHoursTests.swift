import Board
import Foundation
import Testing

/// Quiet hours (CONTRACT §14): on the device's wall clock, spanning midnight, and when they end.
@Suite("Quiet hours")
struct QuietHoursTests {
    static func hours(_ start: String, _ end: String) -> NotificationSettings.QuietHours {
        .init(start: LocalTime(parsing: start)!, end: LocalTime(parsing: end)!)
    }

    @Test("a span within a day and one over midnight: start inclusive, end exclusive")
    func contains() {
        let night = Self.hours("22:00", "07:00")
        for quiet in ["22:00", "23:59", "00:00", "06:59"] { #expect(night.contains(LocalTime(parsing: quiet)!), "\(quiet)") }
        for awake in ["07:00", "12:00", "21:59"] { #expect(!night.contains(LocalTime(parsing: awake)!), "\(awake)") }
        let lunch = Self.hours("12:00", "13:30")
        #expect(lunch.contains(LocalTime(parsing: "12:00")!) && lunch.contains(LocalTime(parsing: "13:29")!))
        #expect(!lunch.contains(LocalTime(parsing: "13:30")!) && !lunch.contains(LocalTime(parsing: "11:59")!))
    }

    @Test("on the device's clock, not the server's: 23:00 in Seoul is quiet, and ends at 07:00 Seoul time; a DST gap moves the end to the next minute that exists")
    func inAZone() {
        let night = Self.hours("22:00", "07:00")
        let seoul = TimeZone(identifier: "Asia/Seoul")!
        // 2026-11-28T14:00:00Z is 23:00 in Seoul.
        let (quiet, endsAt) = night.quiet(at: 1_795_874_400, in: seoul)
        #expect(quiet)
        #expect(endsAt == 1_795_903_200, "2026-11-28T22:00:00Z: 07:00 on the 29th in Seoul")
        // The same instant is 09:00 in New York: not quiet there.
        #expect(!night.quiet(at: 1_795_874_400, in: TimeZone(identifier: "America/New_York")!).quiet)
        // Quiet hours ending at 02:30 on New York's spring-forward night end at 03:00 EDT (07:00Z).
        let early = Self.hours("01:00", "02:30")
        let (gapQuiet, gapEnd) = early.quiet(at: 1_772_949_600, in: TimeZone(identifier: "America/New_York")!)  // 2026-03-08T06:00:00Z, 01:00 EST
        #expect(gapQuiet)
        #expect(gapEnd == 1_772_953_200, "2026-03-08T07:00:00Z")
    }
}
