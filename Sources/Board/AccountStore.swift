import Foundation

/// Where accounts, sessions and blocks live. `PostgresAccountStore` is the real one.
public protocol AccountStore: Sendable {
    /// Creates an anonymous account with its first session. With an idempotency key, a replay returns the
    /// account the first request created (`replayed: true`), with a new session.
    func createAnonymous(displayName: String, tokenHash: String, tokenPrefix: String, idempotency: IdempotencyKey?) async throws -> (Account, replayed: Bool)
    /// The account behind a token hash, with the session id; nil for unknown or revoked tokens.
    func identity(tokenHash: String) async throws -> Identity?
    /// Turns an anonymous account into a registered one, revokes its tokens and issues a new session.
    func register(accountID: Int, username: String, passwordHash: String, tokenHash: String, tokenPrefix: String) async throws -> Account
    /// Username lookup for login: the account and its password hash.
    func credentials(username: String) async throws -> (Account, passwordHash: String)?
    func addSession(accountID: Int, tokenHash: String, tokenPrefix: String) async throws
    func updatePasswordHash(accountID: Int, passwordHash: String) async throws
    func revokeSession(id: Int) async throws
    func account(id: Int) async throws -> Account?
    /// Deletes the account, its posts and sessions.
    func delete(accountID: Int) async throws
    func block(blocker: Int, blocked: Int) async throws
    func unblock(blocker: Int, blocked: Int) async throws
}

/// A client's `Idempotency-Key`, scoped to whose it is.
public struct IdempotencyKey: Sendable, Equatable {
    public var scope: String
    public var key: String
    public var requestHash: String

    public init(scope: String, key: String, requestHash: String) {
        self.scope = scope
        self.key = key
        self.requestHash = requestHash
    }

    /// Keys are 1–200 printable ASCII characters.
    public static func validate(_ raw: String) throws -> String {
        guard (1...200).contains(raw.utf8.count), raw.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw BoardError.badRequest("Idempotency-Key must be 1–200 printable ASCII characters")
        }
        return raw
    }
}
