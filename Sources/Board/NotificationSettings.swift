import CivilTime
import Foundation

/// What an account wants pushed (CONTRACT §14). The defaults: replies, report outcomes and moderation on; the
/// briefing off, every day; no quiet hours.
public struct NotificationSettings: Sendable, Equatable {
    public struct Briefing: Sendable, Equatable {
        public var enabled = false
        public var regionID: Int?
        public var time: LocalTime?
        public var days: [Weekday] = Weekday.allCases

        public init() {}
    }

    /// Hours in which reply notifications wait, folded into one summary sent when they end (CONTRACT §14). On each
    /// device's wall clock; `start` after `end` spans midnight (`22:00`–`07:00`).
    public struct QuietHours: Sendable, Equatable {
        public var start: LocalTime
        public var end: LocalTime

        public init(start: LocalTime, end: LocalTime) {
            self.start = start
            self.end = end
        }

        /// Whether a wall-clock minute of the day is quiet: from `start` (inclusive) to `end` (exclusive).
        public func contains(_ minute: LocalTime) -> Bool {
            start < end ? (start <= minute && minute < end) : (minute >= start || minute < end)
        }

        /// Whether `instant` (seconds since 1970) is quiet in `timeZone`, and if so the instant the quiet hours end
        /// (the next time the wall clock reads `end`, or the next minute that exists when a DST gap skips it).
        public func quiet(at instant: Int64, in timeZone: TimeZone) -> (quiet: Bool, endsAt: Int64?) {
            let offset = Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant))))
            let (_, second) = CivilDate.split(seconds: instant + offset)
            guard let minute = LocalTime(minutes: Int(second / 60)), contains(minute) else { return (false, nil) }
            let ending = BriefingSchedule(time: end, days: Weekday.allCases, timeZone: timeZone)
            return (true, ending.next(atOrAfter: instant + 1)?.fire)
        }
    }

    public var replies = true
    public var reportOutcomes = true
    public var moderation = true
    public var briefing = Briefing()
    public var quietHours: QuietHours?

    public init() {}
}
