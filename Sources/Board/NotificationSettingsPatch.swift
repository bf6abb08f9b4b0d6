/// A `PATCH /v1/accounts/me/notifications` as sent: every field optional; `quietHours` absent leaves them alone,
/// `null` ends them. Checked by `NotificationService.apply` as a whole: one bad field and nothing changes.
public struct NotificationSettingsPatch: Sendable {
    public struct Briefing: Sendable {
        public var enabled: Bool?
        public var regionID: String?
        public var time: String?
        public var days: [String]?

        public init(enabled: Bool? = nil, regionID: String? = nil, time: String? = nil, days: [String]? = nil) {
            self.enabled = enabled
            self.regionID = regionID
            self.time = time
            self.days = days
        }
    }

    public struct QuietHours: Sendable {
        public var start: String?
        public var end: String?

        public init(start: String?, end: String?) {
            self.start = start
            self.end = end
        }
    }

    public var replies: Bool?
    public var reportOutcomes: Bool?
    public var moderation: Bool?
    public var briefing: Briefing?
    /// nil: leave them; `.some(nil)`: no quiet hours.
    public var quietHours: QuietHours??

    public init(
        replies: Bool? = nil, reportOutcomes: Bool? = nil, moderation: Bool? = nil, briefing: Briefing? = nil, quietHours: QuietHours?? = nil
    ) {
        self.replies = replies
        self.reportOutcomes = reportOutcomes
        self.moderation = moderation
        self.briefing = briefing
        self.quietHours = quietHours
    }
}
