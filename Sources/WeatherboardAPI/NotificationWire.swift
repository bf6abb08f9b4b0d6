import Foundation

/// `PUT /v1/accounts/me/devices/{deviceToken}` (CONTRACT §14).
public struct DeviceRequest: Codable, Sendable {
    public var environment: String?
    public var timeZone: String?
    public var language: String?
    public var units: String?

    public init(environment: String?, timeZone: String?, language: String? = nil, units: String? = nil) {
        self.environment = environment
        self.timeZone = timeZone
        self.language = language
        self.units = units
    }
}

/// A registered device (CONTRACT §14).
public struct DeviceResponse: Codable, Sendable, Equatable {
    public var token: String
    public var environment: String
    public var timeZone: String
    public var language: String
    public var units: String
    public var registeredAt: Date

    public init(token: String, environment: String, timeZone: String, language: String, units: String, registeredAt: Date) {
        self.token = token
        self.environment = environment
        self.timeZone = timeZone
        self.language = language
        self.units = units
        self.registeredAt = registeredAt
    }
}

/// The whole notification settings object (CONTRACT §14): `GET` and `PATCH /v1/accounts/me/notifications`.
public struct NotificationSettingsResponse: Codable, Sendable, Equatable {
    public struct Briefing: Codable, Sendable, Equatable {
        public var enabled: Bool
        public var regionId: String?
        public var time: String?
        public var days: [String]

        public init(enabled: Bool, regionId: String?, time: String?, days: [String]) {
            self.enabled = enabled
            self.regionId = regionId
            self.time = time
            self.days = days
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(enabled, forKey: .enabled)
            try c.encode(regionId, forKey: .regionId)
            try c.encode(time, forKey: .time)
            try c.encode(days, forKey: .days)
        }
    }

    public struct QuietHours: Codable, Sendable, Equatable {
        public var start: String
        public var end: String

        public init(start: String, end: String) {
            self.start = start
            self.end = end
        }
    }

    public var replies: Bool
    public var reportOutcomes: Bool
    public var moderation: Bool
    public var briefing: Briefing
    public var quietHours: QuietHours?

    public init(replies: Bool, reportOutcomes: Bool, moderation: Bool, briefing: Briefing, quietHours: QuietHours?) {
        self.replies = replies
        self.reportOutcomes = reportOutcomes
        self.moderation = moderation
        self.briefing = briefing
        self.quietHours = quietHours
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(replies, forKey: .replies)
        try c.encode(reportOutcomes, forKey: .reportOutcomes)
        try c.encode(moderation, forKey: .moderation)
        try c.encode(briefing, forKey: .briefing)
        try c.encode(quietHours, forKey: .quietHours)
    }
}

/// `PATCH /v1/accounts/me/notifications`: any of the settings; `quietHours: null` ends the quiet hours.
public struct NotificationSettingsPatchRequest: Decodable, Sendable {
    public struct Briefing: Decodable, Sendable {
        public var enabled: Bool?
        public var regionId: String?
        public var time: String?
        public var days: [String]?
    }

    public struct QuietHours: Decodable, Sendable {
        public var start: String?
        public var end: String?
    }

    public var replies: Bool?
    public var reportOutcomes: Bool?
    public var moderation: Bool?
    public var briefing: Briefing?
    /// nil: absent (left alone); `.some(nil)`: `null` (no quiet hours).
    public var quietHours: QuietHours??

    enum CodingKeys: String, CodingKey {
        case replies, reportOutcomes, moderation, briefing, quietHours
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        replies = try c.decodeIfPresent(Bool.self, forKey: .replies)
        reportOutcomes = try c.decodeIfPresent(Bool.self, forKey: .reportOutcomes)
        moderation = try c.decodeIfPresent(Bool.self, forKey: .moderation)
        briefing = try c.decodeIfPresent(Briefing.self, forKey: .briefing)
        if c.contains(.quietHours) {
            quietHours = .some(try c.decodeNil(forKey: .quietHours) ? nil : try c.decode(QuietHours.self, forKey: .quietHours))
        } else {
            quietHours = .none
        }
    }
}
