import Database
import Foundation
import Vocabulary

/// Devices and notification settings in PostgreSQL (sql/0029). Every write checks its caller first, in its own
/// transaction (`Caller`), holding the account's row for update: one account's registrations and settings changes
/// happen one after another, so its device count and its settings never lose a change.
public struct PostgresNotificationStore: Sendable {
    let database: PostgresPool
    /// Whose clock schedules the briefings (`PushQueue.scheduleBriefings`).
    let push: PushQueue

    public init(database: PostgresPool, push: PushQueue = .off) {
        self.database = database
        self.push = push
    }

    static let deviceColumns = "token, environment, time_zone, language, units, registered_at, id"

    static func device(from row: PostgresRow) throws -> Device {
        Device(
            token: try row.decode(String.self, "token"),
            environment: try UnknownStoredValue.decode(PushEnvironment.self, row.decode(String.self, "environment"), column: "devices.environment"),
            timeZone: try row.decode(String.self, "time_zone"),
            language: try UnknownStoredValue.decode(Language.self, row.decode(String.self, "language"), column: "devices.language"),
            units: try UnknownStoredValue.decode(Units.self, row.decode(String.self, "units"), column: "devices.units"),
            registeredAt: try row.decode(Date.self, "registered_at"),
            id: try row.decode(Int.self, "id")
        )
    }

    /// Registers `token` for the caller's session, or moves it there (from another session of the caller's, or from
    /// another account, which never notifies that phone again), then keeps the caller's `keep` newest devices.
    /// `created`: the token was not the caller's before.
    func register(
        token: String, environment: PushEnvironment, timeZone: String, language: Language, units: Units, by caller: Caller, keep: Int
    ) async throws -> (Device, created: Bool) {
        try await database.transaction { connection in
            let identity = try caller.identity(on: connection, lock: .updatingAccount)
            let me = identity.accountID
            let row = try connection.query(
                """
                WITH earlier AS (SELECT account_id FROM devices WHERE token = \(token))
                INSERT INTO devices AS d (token, account_id, session_id, environment, time_zone, language, units)
                VALUES (\(token), \(me), \(identity.sessionID), \(environment.rawValue), \(timeZone), \(language.rawValue), \(units.rawValue))
                ON CONFLICT (token) DO UPDATE SET id = nextval('devices_id_seq'), account_id = EXCLUDED.account_id,
                    session_id = EXCLUDED.session_id, environment = EXCLUDED.environment, time_zone = EXCLUDED.time_zone,
                    language = EXCLUDED.language, units = EXCLUDED.units, registered_at = now(),
                    briefed_day = CASE WHEN d.account_id = EXCLUDED.account_id THEN d.briefed_day END
                RETURNING \(raw: Self.deviceColumns), coalesce((SELECT account_id FROM earlier) = \(me), false) AS was_mine
                """
            )[0]
            try PushQueue.scheduleBriefings(of: me, token: token, now: push.policy.clock(), on: connection)
            try connection.execute(
                """
                DELETE FROM devices WHERE account_id = \(me)
                  AND id < (SELECT id FROM devices WHERE account_id = \(me) ORDER BY id DESC OFFSET \(keep - 1) LIMIT 1)
                """
            )
            return (try Self.device(from: row), !(try row.decode(Bool.self, "was_mine")))
        }
    }

    /// A page of account `accountID`'s devices before `before`, newest registration first.
    func devices(of accountID: Int, before: Int?, limit: Int) async throws -> [Device] {
        try await database.query(
            """
            SELECT \(raw: Self.deviceColumns) FROM devices WHERE account_id = \(accountID) AND id < \(before ?? Int.max)
            ORDER BY id DESC LIMIT \(limit)
            """
        ).map(Self.device(from:))
    }

    /// Removes the caller's device `token` (nothing when it is not the caller's).
    func remove(token: String, by caller: Caller) async throws {
        try await database.transaction { connection in
            let me = try caller.identity(on: connection).accountID
            try connection.execute("DELETE FROM devices WHERE token = \(token) AND account_id = \(me)")
        }
    }

    static let settingsColumns = """
        replies, report_outcomes, moderation, briefing_enabled, briefing_region_id, briefing_minute, briefing_days, quiet_start, quiet_end
        """

    static func settings(from row: PostgresRow) throws -> NotificationSettings {
        var settings = NotificationSettings()
        settings.replies = try row.decode(Bool.self, "replies")
        settings.reportOutcomes = try row.decode(Bool.self, "report_outcomes")
        settings.moderation = try row.decode(Bool.self, "moderation")
        settings.briefing.enabled = try row.decode(Bool.self, "briefing_enabled")
        settings.briefing.regionID = try row.decode(Int?.self, "briefing_region_id")
        settings.briefing.time = try row.decode(Int?.self, "briefing_minute").flatMap(LocalTime.init(minutes:))
        settings.briefing.days = Weekday.days(of: try row.decode(Int.self, "briefing_days"))
        if let start = try row.decode(Int?.self, "quiet_start").flatMap(LocalTime.init(minutes:)),
            let end = try row.decode(Int?.self, "quiet_end").flatMap(LocalTime.init(minutes:))
        {
            settings.quietHours = .init(start: start, end: end)
        }
        return settings
    }

    /// Account `accountID`'s settings (the defaults when it never changed one).
    func settings(of accountID: Int) async throws -> NotificationSettings {
        try await database.query("SELECT \(raw: Self.settingsColumns) FROM notification_settings WHERE account_id = \(accountID)")
            .first.map(Self.settings(from:)) ?? NotificationSettings()
    }

    /// Applies `change` to the caller's settings as they are, in one transaction that checks the caller first and
    /// holds its account's row (two changes at once: one after the other, neither lost); answers the settings after.
    func update(by caller: Caller, _ change: @escaping @Sendable (NotificationSettings) throws -> NotificationSettings) async throws -> NotificationSettings {
        do {
            return try await database.transaction { connection in
                let me = try caller.identity(on: connection, lock: .updatingAccount).accountID
                let current = try connection.query("SELECT \(raw: Self.settingsColumns) FROM notification_settings WHERE account_id = \(me)")
                    .first.map(Self.settings(from:)) ?? NotificationSettings()
                let new = try change(current)
                try connection.execute(
                    """
                    INSERT INTO notification_settings (account_id, \(raw: Self.settingsColumns))
                    VALUES (\(me), \(new.replies), \(new.reportOutcomes), \(new.moderation), \(new.briefing.enabled), \(new.briefing.regionID),
                            \(new.briefing.time?.minutes), \(Weekday.bits(of: new.briefing.days)), \(new.quietHours?.start.minutes), \(new.quietHours?.end.minutes))
                    ON CONFLICT (account_id) DO UPDATE SET replies = EXCLUDED.replies, report_outcomes = EXCLUDED.report_outcomes,
                        moderation = EXCLUDED.moderation, briefing_enabled = EXCLUDED.briefing_enabled,
                        briefing_region_id = EXCLUDED.briefing_region_id, briefing_minute = EXCLUDED.briefing_minute,
                        briefing_days = EXCLUDED.briefing_days, quiet_start = EXCLUDED.quiet_start, quiet_end = EXCLUDED.quiet_end
                    """
                )
                if new.briefing != current.briefing {
                    try PushQueue.scheduleBriefings(of: me, now: self.push.policy.clock(), on: connection)
                }
                return new
            }
        } catch let error as PostgresError where error.isForeignKeyViolation {
            // The region went away between the check and the write.
            throw BoardError.notFound("region")
        }
    }
}
