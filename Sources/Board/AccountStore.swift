import Foundation

/// Where accounts, sessions and blocks live. `PostgresAccountStore` is the real one.
public protocol AccountStore: Sendable {
    /// Creates an anonymous account with its first session, counted by `admission`. With an idempotency key,
    /// a replay returns the account the first request created (`replayed: true`, not counted), with a new
    /// session, while that account is still anonymous and exists (`idempotencyConflict` after that).
    func createAnonymous(
        displayName: String, tokenHash: String, tokenPrefix: String, idempotency: IdempotencyKey?, admission: Admission
    ) async throws -> (Account, replayed: Bool)
    /// The account behind a token hash, with the session id; nil for unknown or revoked tokens.
    func identity(tokenHash: String) async throws -> Identity?
    /// Notes that the account has just written (read-your-writes on standbys, CONTRACT §12).
    func recordWrite(accountID: Int) async throws
    /// Turns an anonymous account into a registered one, revokes its tokens and issues a new session.
    func register(accountID: Int, username: String, passwordHash: String, tokenHash: String, tokenPrefix: String) async throws -> Account
    /// Whether a (normalized) username is taken, by a live account.
    func usernameExists(_ username: String) async throws -> Bool
    /// Username lookup for login: the account and its password hash.
    func credentials(username: String) async throws -> (Account, passwordHash: String)?
    func addSession(accountID: Int, tokenHash: String, tokenPrefix: String) async throws
    func updatePasswordHash(accountID: Int, passwordHash: String) async throws
    func revokeSession(by caller: Caller) async throws
    func account(id: Int) async throws -> Account?
    /// Deletes the account (CONTRACT §3): its sessions, blocks and idempotency keys go; its posts leave
    /// every view and lose their text, except reported ones, which stay as moderation evidence (their
    /// reports keep their snapshots); the account row stays only as an id, without name or password.
    /// Its media is only marked, in the same transaction: the media sync and the purger deal with the files.
    func delete(by caller: Caller) async throws
    func block(by caller: Caller, blocked: Int) async throws
    func unblock(by caller: Caller, blocked: Int) async throws
}
