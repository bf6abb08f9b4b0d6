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

    public struct QuietHours: Sendable, Equatable {
        public var start: LocalTime
        public var end: LocalTime

        public init(start: LocalTime, end: LocalTime) {
            self.start = start
            self.end = end
        }
    }

    public var replies = true
    public var reportOutcomes = true
    public var moderation = true
    public var briefing = Briefing()
    public var quietHours: QuietHours?

    public init() {}
}
