import Foundation
import Vocabulary

/// CONTRACT §14's devices and settings: who registered which phone, for which APNs environment and wall clock, and
/// what each account wants pushed. With `PUSH=off` (the default) they are stored all the same.
public struct NotificationService: Sendable {
    let store: PostgresNotificationStore
    /// The region catalog, for the briefing's `regionId`.
    let regions: any RegionResolving

    public init(store: PostgresNotificationStore, regions: any RegionResolving) {
        self.store = store
        self.regions = regions
    }

    /// The most devices an account keeps: an eleventh registration drops the least recently registered.
    public static let devicesPerAccount = 10

    // MARK: Devices

    /// `PUT /v1/accounts/me/devices/{deviceToken}`: registers the phone for the caller's session, or moves it there.
    /// `created`: the token was not the caller's before (201), else 200. `language` defaults to `defaultLanguage`
    /// (the request's `Accept-Language`), `units` to metric. Every value is checked before anything is written.
    public func register(
        token raw: String, environment: String?, timeZone: String?, language: String?, units: String?, defaultLanguage: Language, by caller: Caller
    ) async throws -> (Device, created: Bool) {
        let token = try Self.deviceToken(raw)
        guard let environment else { throw BoardError.invalidField(field: "environment", message: "is required: production or sandbox") }
        guard let pushEnvironment = PushEnvironment(rawValue: environment) else {
            throw BoardError.invalidField(field: "environment", message: "must be production or sandbox")
        }
        let zone = try Self.timeZone(timeZone)
        let chosenLanguage = try language.map { raw -> Language in
            guard let language = Language(rawValue: raw) else { throw BoardError.invalidField(field: "language", message: "must be ko or en") }
            return language
        } ?? defaultLanguage
        let chosenUnits = try units.map { raw -> Units in
            guard let units = Units(rawValue: raw) else { throw BoardError.invalidField(field: "units", message: "must be metric or imperial") }
            return units
        } ?? .metric
        return try await store.register(
            token: token, environment: pushEnvironment, timeZone: zone, language: chosenLanguage, units: chosenUnits, by: caller,
            keep: Self.devicesPerAccount
        )
    }

    /// A page of the caller's devices, newest registration first.
    public func devices(of identity: Identity, before: Int?, limit: Int) async throws -> (devices: [Device], nextCursor: String?) {
        let rows = try await store.devices(of: identity.accountID, before: before, limit: limit + 1)
        guard rows.count > limit else { return (rows, nil) }
        let shown = Array(rows.prefix(limit))
        return (shown, shown.last.map { Cursor.encode($0.id) })
    }

    /// `DELETE /v1/accounts/me/devices/{deviceToken}`: idempotent; another account's device is left alone.
    public func remove(token raw: String, by caller: Caller) async throws {
        try await store.remove(token: try Self.deviceToken(raw), by: caller)
    }

    /// An APNs device token as sent: 64–200 hex characters, either case; stored lower-cased.
    static func deviceToken(_ raw: String) throws -> String {
        let bytes = raw.utf8
        guard (64...200).contains(bytes.count), bytes.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }) else {
            throw BoardError.invalidField(field: "deviceToken", message: "must be 64–200 hexadecimal characters")
        }
        return raw.lowercased()
    }

    /// Every IANA time zone name this machine knows (its tz database), as spelled there.
    static let knownTimeZones = Set(TimeZone.knownTimeZoneIdentifiers)

    static func timeZone(_ raw: String?) throws -> String {
        guard let raw else { throw BoardError.invalidField(field: "timeZone", message: "is required: an IANA time zone name such as Asia/Seoul") }
        guard raw.utf8.count <= 64, knownTimeZones.contains(raw) else {
            throw BoardError.invalidField(field: "timeZone", message: "must be an IANA time zone name such as Asia/Seoul")
        }
        return raw
    }

    // MARK: Settings

    public func settings(of identity: Identity) async throws -> NotificationSettings {
        try await store.settings(of: identity.accountID)
    }

    /// `PATCH /v1/accounts/me/notifications`: every value is checked first, then merged with the settings as they
    /// are, in one transaction (`PostgresNotificationStore.update`); one bad value and nothing changes.
    public func update(_ patch: NotificationSettingsPatch, by caller: Caller) async throws -> NotificationSettings {
        var newRegion: Int?
        if let raw = patch.briefing?.regionID {
            // An id of any other shape names no region (CONTRACT §1).
            guard let id = CanonicalID.parse(raw), try await regions.regionExists(id: id) else { throw BoardError.notFound("region") }
            newRegion = id
        }
        let regionID = newRegion
        let time = try patch.briefing?.time.map { raw -> LocalTime in
            guard let time = LocalTime(parsing: raw) else { throw BoardError.invalidField(field: "briefing.time", message: "must be HH:MM, 00:00 to 23:59") }
            return time
        }
        let days = try patch.briefing?.days.map { raw -> [Weekday] in
            let days = try raw.map { name -> Weekday in
                guard let day = Weekday(rawValue: name) else {
                    throw BoardError.invalidField(field: "briefing.days", message: "must name days as mon, tue, wed, thu, fri, sat, sun")
                }
                return day
            }
            return Weekday.allCases.filter(days.contains)
        }
        let quietHours: NotificationSettings.QuietHours?? = try patch.quietHours.map { sent in
            try sent.map { hours in
                guard let start = hours.start.flatMap(LocalTime.init(parsing:)) else {
                    throw BoardError.invalidField(field: "quietHours.start", message: "must be HH:MM, 00:00 to 23:59")
                }
                guard let end = hours.end.flatMap(LocalTime.init(parsing:)) else {
                    throw BoardError.invalidField(field: "quietHours.end", message: "must be HH:MM, 00:00 to 23:59")
                }
                guard start != end else { throw BoardError.invalidField(field: "quietHours.end", message: "must differ from quietHours.start") }
                return NotificationSettings.QuietHours(start: start, end: end)
            }
        }
        return try await store.update(by: caller) { current in
            var settings = current
            if let replies = patch.replies { settings.replies = replies }
            if let reportOutcomes = patch.reportOutcomes { settings.reportOutcomes = reportOutcomes }
            if let moderation = patch.moderation { settings.moderation = moderation }
            if let enabled = patch.briefing?.enabled { settings.briefing.enabled = enabled }
            if let regionID { settings.briefing.regionID = regionID }
            if let time { settings.briefing.time = time }
            if let days { settings.briefing.days = days }
            if let quietHours { settings.quietHours = quietHours }
            if settings.briefing.enabled {
                guard settings.briefing.regionID != nil else {
                    throw BoardError.invalidField(field: "briefing.regionId", message: "is required to turn the briefing on")
                }
                guard settings.briefing.time != nil else {
                    throw BoardError.invalidField(field: "briefing.time", message: "is required to turn the briefing on")
                }
            }
            return settings
        }
    }
}
