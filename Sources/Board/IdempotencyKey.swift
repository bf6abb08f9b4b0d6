import Database
import Foundation
import Hashing

/// A client's `Idempotency-Key`, scoped to whose it is (`account-create`, `post:<account>`).
///
/// A replayed account creation hands out a token, so a key is a secret: 16–200 printable ASCII characters
/// (a UUID), and only its SHA-256 is stored. Keys expire after 24 hours (the purger removes them).
public struct IdempotencyKey: Sendable, Equatable {
    public var scope: String
    /// SHA-256 (hex) of the key as sent.
    public var keyHash: String
    /// What the request asked for, so the same key with a different request is a conflict.
    public var requestHash: String

    /// Validates the key as sent: 422 `invalid_field` naming `Idempotency-Key` otherwise.
    public init(scope: String, key raw: String, requestHash: String) throws {
        guard (16...200).contains(raw.utf8.count), raw.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else {
            throw BoardError.invalidField(field: "Idempotency-Key", message: "must be 16–200 printable ASCII characters (a UUID)")
        }
        self.scope = scope
        self.keyHash = Digest.sha256Hex(raw)
        self.requestHash = requestHash
    }

    /// The key in `scope`: for a write that learns whose it is inside its transaction (`Caller`).
    func scoped(_ scope: String) -> IdempotencyKey {
        var key = self
        key.scope = scope
        return key
    }

    /// What an earlier request with this key left behind.
    enum Claim {
        /// The key is new (or had expired): this request does the work and then calls `complete`.
        case new
        /// A request with this key committed first (the claim waited for it): answer from its resource.
        case replay(resourceID: Int, requestHash: String)
    }

    /// Claims the key inside the caller's transaction. Two requests with one key at once: the second waits
    /// on the first's uncommitted row, then replays what it made (or claims the key if it rolled back).
    func claim(on connection: PostgresConnection) throws -> Claim {
        let inserted = try connection.execute(
            """
            INSERT INTO idempotency_keys (scope, key, request_hash) VALUES (\(scope), \(keyHash), \(requestHash))
            ON CONFLICT (scope, key) DO NOTHING
            """
        )
        if inserted == 1 { return .new }
        let row = try connection.query(
            """
            SELECT request_hash, resource_id, created_at > now() - interval '24 hours' AS live
            FROM idempotency_keys WHERE scope = \(scope) AND key = \(keyHash) FOR UPDATE
            """
        ).first
        if let row, try row.decode(Bool.self, "live"), let resourceID = try row.decode(Int?.self, "resource_id") {
            return .replay(resourceID: resourceID, requestHash: try row.decode(String.self, "request_hash"))
        }
        // Expired but not purged yet: the key starts afresh.
        try connection.execute(
            """
            INSERT INTO idempotency_keys (scope, key, request_hash) VALUES (\(scope), \(keyHash), \(requestHash))
            ON CONFLICT (scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, resource_id = NULL, created_at = now()
            """
        )
        return .new
    }

    /// Records what the request made, in the same transaction as `claim`.
    func complete(resourceID: Int, on connection: PostgresConnection) throws {
        try connection.execute(
            "UPDATE idempotency_keys SET resource_id = \(resourceID), response_status = 201 WHERE scope = \(scope) AND key = \(keyHash)"
        )
    }
}
