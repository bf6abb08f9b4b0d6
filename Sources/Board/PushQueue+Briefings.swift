import Database
import Foundation
import Vocabulary

extension PushQueue {
    /// A device whose briefing is due.
    public struct DueBriefing: Sendable {
        public var deviceToken: String
        public var accountID: Int
        public var regionID: Int
        public var language: Language
        public var units: Units
        /// The instant it was due.
        public var due: Date
    }

    /// Sets the next briefing of `accountID`'s devices (of `token` alone when given) from its settings, in the
    /// caller's transaction (a device's registration, a change of settings): each device's next firing on its own
    /// wall clock (`BriefingSchedule`), never on a local day it already had one; NULL when the briefing is off.
    static func scheduleBriefings(of accountID: Int, token: String? = nil, now: Date, on connection: PostgresConnection) throws {
        var sql: SQLQuery = """
            SELECT d.token, d.time_zone, d.briefed_day, s.briefing_enabled, s.briefing_minute, s.briefing_days
            FROM devices d LEFT JOIN notification_settings s ON s.account_id = d.account_id
            WHERE d.account_id = \(accountID)
            """
        if let token { sql.append(" AND d.token = \(token)") }
        var tokens: [String] = []
        var next: [String] = []
        for row in try connection.query(sql) {
            tokens.append(try row.decode(String.self, "token"))
            let fire = try Self.nextBriefing(
                enabled: try row.decode(Bool?.self, "briefing_enabled") ?? false, minute: try row.decode(Int?.self, "briefing_minute"),
                days: try row.decode(Int?.self, "briefing_days") ?? 127, timeZone: try row.decode(String.self, "time_zone"),
                briefedDay: try row.decode(Int64?.self, "briefed_day"), after: now
            )
            next.append(fire.map { String($0.fire) } ?? "")
        }
        guard !tokens.isEmpty else { return }
        try connection.execute(
            """
            UPDATE devices d SET next_briefing_at = to_timestamp(NULLIF(t.next, '')::double precision)
            FROM unnest(\(tokens)::text[], \(next)::text[]) AS t(token, next) WHERE d.token = t.token
            """
        )
    }

    /// The next firing at or after `after` on a local day after `briefedDay`, or nil (off, no day chosen, a zone the
    /// machine does not know).
    static func nextBriefing(
        enabled: Bool, minute: Int?, days: Int, timeZone: String, briefedDay: Int64?, after: Date
    ) throws -> (fire: Int64, localDay: Int64)? {
        guard enabled, let minute, let time = LocalTime(minutes: minute), let zone = TimeZone(identifier: timeZone) else { return nil }
        let schedule = BriefingSchedule(time: time, days: Weekday.days(of: days), timeZone: zone)
        var from = Int64(after.timeIntervalSince1970.rounded(.up))
        while let next = schedule.next(atOrAfter: from) {
            if let briefedDay, next.localDay <= briefedDay {
                from = next.fire + 1
                continue
            }
            return next
        }
        return nil
    }

    /// Up to `limit` devices whose briefing is due now, the longest due first (read only: `queueBriefings` takes them).
    public func dueBriefings(limit: Int, on database: PostgresPool) async throws -> [DueBriefing] {
        try await database.query(Self.dueQuery(now: policy.clock(), limit: limit)).compactMap { row in
            guard let language = Language(rawValue: try row.decode(String.self, "language")),
                let units = Units(rawValue: try row.decode(String.self, "units"))
            else { return nil }
            return DueBriefing(
                deviceToken: try row.decode(String.self, "token"), accountID: try row.decode(Int.self, "account_id"),
                regionID: try row.decode(Int.self, "briefing_region_id"), language: language, units: units,
                due: try row.decode(Date.self, "next_briefing_at")
            )
        }
    }

    /// `dueBriefings`'s statement: a walk of `devices_briefing_due_idx` in due order, each device's settings probed by
    /// key (`PushPlanTests`): never a sort of every due device.
    static func dueQuery(now: Date, limit: Int) -> SQLQuery {
        """
        SELECT d.token, d.account_id, d.language, d.units, d.next_briefing_at, s.briefing_region_id
        FROM devices d
        CROSS JOIN LATERAL (\(raw: PlanTrick.fenced("SELECT briefing_region_id, briefing_enabled FROM notification_settings WHERE account_id = d.account_id"))) s
        WHERE d.next_briefing_at <= \(now) AND s.briefing_enabled AND s.briefing_region_id IS NOT NULL
        ORDER BY d.next_briefing_at LIMIT \(limit)
        """
    }

    /// Queues the briefings of `due` devices, each with its payload, in one transaction: the devices still due are
    /// locked (`SKIP LOCKED`: another instance's scheduler doing the same skips them), their briefing queued (a banned
    /// account's not), and their next one set. Returns how many were queued.
    @discardableResult
    public func queueBriefings(_ due: [(DueBriefing, payload: [UInt8])], on database: PostgresPool) async throws -> Int {
        guard !due.isEmpty else { return 0 }
        let now = policy.clock()
        let payloads = Dictionary(due.map { ($0.0.deviceToken, $0.payload) }, uniquingKeysWith: { first, _ in first })
        return try await database.transaction { connection in
            let rows = try connection.query(
                """
                SELECT d.token, d.account_id, d.time_zone, d.briefed_day, d.next_briefing_at, s.briefing_enabled, s.briefing_minute,
                       s.briefing_days, \(raw: Self.banned("a")) AS banned
                FROM devices d JOIN notification_settings s ON s.account_id = d.account_id JOIN accounts a ON a.id = d.account_id
                WHERE d.token = ANY (\(Array(payloads.keys))::text[]) AND d.next_briefing_at <= \(now)
                FOR UPDATE OF d SKIP LOCKED
                """
            )
            var items: [Item] = []
            var tokens: [String] = [], next: [String] = [], days: [String] = []
            for row in rows {
                let token = try row.decode(String.self, "token")
                let zone = try row.decode(String.self, "time_zone")
                let fired = try row.decode(Date.self, "next_briefing_at")
                let localDay = TimeZone(identifier: zone).map { zone in
                    let seconds = Int64(fired.timeIntervalSince1970)
                    return (seconds + Int64(zone.secondsFromGMT(for: fired))).floorDivided(by: 86_400)
                } ?? Int64(fired.timeIntervalSince1970).floorDivided(by: 86_400)
                let following = try Self.nextBriefing(
                    enabled: try row.decode(Bool.self, "briefing_enabled"), minute: try row.decode(Int?.self, "briefing_minute"),
                    days: try row.decode(Int.self, "briefing_days"), timeZone: zone, briefedDay: localDay, after: now
                )
                tokens.append(token)
                next.append(following.map { String($0.fire) } ?? "")
                days.append(String(localDay))
                guard !(try row.decode(Bool.self, "banned")), let payload = payloads[token] else { continue }
                items.append(
                    Item(
                        accountID: try row.decode(Int.self, "account_id"), deviceToken: token, kind: .briefing, collapseID: "briefing-\(localDay)",
                        payload: String(decoding: payload, as: UTF8.self), sendAfter: now,
                        expiresAt: now.addingTimeInterval(TimeInterval(policy.briefingExpirySeconds))
                    )
                )
            }
            try Self.insert(items, on: connection)
            if !tokens.isEmpty {
                try connection.execute(
                    """
                    UPDATE devices d SET next_briefing_at = to_timestamp(NULLIF(t.next, '')::double precision), briefed_day = t.day::bigint
                    FROM unnest(\(tokens)::text[], \(next)::text[], \(days)::text[]) AS t(token, next, day) WHERE d.token = t.token
                    """
                )
            }
            return items.count
        }
    }
}

extension Int64 {
    /// Division rounding toward minus infinity (a day before 1970 is negative).
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let (q, r) = quotientAndRemainder(dividingBy: divisor)
        return r < 0 ? q - 1 : q
    }
}
