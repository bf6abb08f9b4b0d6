import Database
import Foundation
import Vocabulary

/// The push queue in PostgreSQL (CONTRACT §14, sql/0030). Its producers write a notification in the transaction of
/// its cause (`PushQueue+Replies`, `PushQueue+Decisions`; the briefing scheduler's in its own), so a crash loses
/// none and a rolled-back cause sends none. Its workers (`PushDelivery`) claim what is due (`PushQueue+Claim`).
///
/// Who gets what is decided here, once, with the one visibility rule (`Visibility`, through the inbox's conditions):
/// a reply notifies exactly when it would show in its post's author's inbox, and it is checked again when it goes.
/// With `PUSH=off` (`Policy.enabled` false) nothing is queued; devices and settings are still stored.
public struct PushQueue: Sendable {
    public struct Policy: Sendable {
        /// `PUSH=apns`: notifications are queued and sent.
        public var enabled: Bool
        /// Reply notifications an account is sent an hour; the rest are folded into one summary.
        public var repliesPerHour = 30
        /// How long a notification is tried: an hour; 12 for the briefing.
        public var expirySeconds = 3600
        public var briefingExpirySeconds = 12 * 3600
        /// How long a claimed notification stays a worker's: past it, a worker that died leaves it to another.
        public var leaseSeconds = 60
        /// Answered notifications are kept this long, then purged (§7).
        public var keepDoneHours = 24
        /// The queue's clock: every time a producer or a worker decides on (quiet hours, the hourly window, what is due).
        /// Tests move it; production reads the system clock.
        public var clock: @Sendable () -> Date = { Date() }

        public init(enabled: Bool) {
            self.enabled = enabled
        }
    }

    public let policy: Policy

    public init(policy: Policy) {
        self.policy = policy
    }

    public static let off = PushQueue(policy: Policy(enabled: false))

    public var enabled: Bool { policy.enabled }

    /// The kinds of notification (`push_queue.kind`).
    public enum Kind: String, Sendable, CaseIterable {
        case reply, replies, reportOutcome, moderation, briefing, test

        /// `apns-priority`: 10 (now), 5 for the briefing (mind the battery).
        public var priority: Int { self == .briefing ? 5 : 10 }
    }

    /// One notification to queue.
    struct Item: Sendable {
        var accountID: Int
        var deviceToken: String
        var kind: Kind
        var collapseID: String
        var payload: String
        var sendAfter: Date
        var expiresAt: Date

        /// A notification whose text is rendered now, due now.
        static func rendered(
            _ payload: PushPayload, kind: Kind, collapseID: String, accountID: Int, deviceToken: String, now: Date, expiresAt: Date
        ) -> Item {
            Item(
                accountID: accountID, deviceToken: deviceToken, kind: kind, collapseID: collapseID,
                payload: String(decoding: payload.json(), as: UTF8.self), sendAfter: now, expiresAt: expiresAt
            )
        }
    }

    /// SQL: account `alias` is banned now (a timed ban that ran out is not a ban).
    static func banned(_ alias: String) -> String {
        "(\(alias).banned AND (\(alias).banned_until IS NULL OR \(alias).banned_until > now()))"
    }

    /// Queues `items`, each rendered, in one statement on `connection` (the cause's transaction, or the scheduler's), as
    /// arrays a row each. (A reply's notification is queued by its own statement: `replyBecameVisible`.)
    static func insert(_ items: [Item], on connection: PostgresConnection) throws {
        guard !items.isEmpty else { return }
        try connection.execute(
            """
            INSERT INTO push_queue (account_id, device_token, kind, apns_id, collapse_id, priority, payload, send_after, expires_at)
            SELECT t.account_id::bigint, t.token, t.kind, gen_random_uuid(), t.collapse_id, t.priority::smallint, t.payload,
                   to_timestamp(t.send_after::double precision), to_timestamp(t.expires_at::double precision)
            FROM unnest(\(items.map { String($0.accountID) })::text[], \(items.map(\.deviceToken))::text[], \(items.map(\.kind.rawValue))::text[],
                        \(items.map(\.collapseID))::text[], \(items.map { String($0.kind.priority) })::text[], \(items.map(\.payload))::text[],
                        \(items.map { String($0.sendAfter.timeIntervalSince1970) })::text[], \(items.map { String($0.expiresAt.timeIntervalSince1970) })::text[])
                 AS t(account_id, token, kind, collapse_id, priority, payload, send_after, expires_at)
            """
        )
    }
}
