import Foundation
import Vocabulary

/// A phone registered for push by one of an account's sessions (CONTRACT §14).
public struct Device: Sendable, Equatable {
    /// The APNs device token, lower-case hex.
    public var token: String
    public var environment: PushEnvironment
    /// An IANA time zone name (`Asia/Seoul`): the briefing's and the quiet hours' wall clock.
    public var timeZone: String
    public var language: Language
    public var units: Units
    public var registeredAt: Date
    /// Taken afresh at every registration: the newest first is the largest.
    public var id: Int

    public init(token: String, environment: PushEnvironment, timeZone: String, language: Language, units: Units, registeredAt: Date, id: Int) {
        self.token = token
        self.environment = environment
        self.timeZone = timeZone
        self.language = language
        self.units = units
        self.registeredAt = registeredAt
        self.id = id
    }
}
