import Foundation
import Hashing
import RateLimit

/// The account rules of CONTRACT §3: anonymous accounts, upgrades to logins, sessions, blocks.
public struct AccountService: Sendable {
    let store: any AccountStore
    let hasher: PasswordHasher
    let rateLimiter: RateLimiter
    /// How this process's session checks ran (`SessionGate`), for `/metrics`.
    public let sessionChecks = SessionCheckCounts()

    public init(store: any AccountStore, hasher: PasswordHasher, rateLimiter: RateLimiter) {
        self.store = store
        self.hasher = hasher
        self.rateLimiter = rateLimiter
    }

    /// `POST /v1/accounts`. Rate limited per client address, counted in the transaction that creates the
    /// account; a replayed `Idempotency-Key` returns the same account with a fresh token and is not counted, while
    /// that account is still anonymous. The key is the secret, not the address: a phone that retries after moving
    /// from Wi-Fi to mobile data gets its account back, not a second one.
    public func createAnonymous(clientIP: String, idempotencyKey: String?) async throws -> IssuedToken {
        let key = try idempotencyKey.map { try IdempotencyKey(scope: "account-create", key: $0, requestHash: "") }
        let token = Token.generate()
        let (account, replayed) = try await store.createAnonymous(
            displayName: Self.anonymousDisplayName(),
            tokenHash: token.hash,
            tokenPrefix: token.displayPrefix,
            idempotency: key,
            admission: Admission(rateLimiter, .accountCreation, subject: clientIP)
        )
        return IssuedToken(account: account, token: token.value, replayed: replayed)
    }

    /// Resolves `Authorization: Bearer <token>`. Malformed, unknown and revoked tokens are all `unauthenticated`.
    /// Notes that `identity` has just written, so its next reads, on any instance, see the write (CONTRACT §12).
    public func recordWrite(by identity: Identity) async throws {
        try await store.recordWrite(accountID: identity.accountID)
    }

    /// `Authorization: Bearer <token>` as a gate for a read to check (`SessionGate`); a malformed token is refused at
    /// once (`unauthenticated`).
    public func gate(bearer: String) throws -> SessionGate {
        guard let token = Token(parsing: bearer) else {
            sessionChecks.add(.refused)
            throw BoardError.unauthenticated
        }
        return SessionGate(tokenHash: token.hash, store: store, counts: sessionChecks)
    }

    /// `POST /v1/accounts/me/credentials`: same account id, same posts; every older token stops working.
    public func register(_ identity: Identity, username rawUsername: String, password: String) async throws -> IssuedToken {
        guard identity.account.kind == .anonymous else { throw BoardError.alreadyRegistered }
        let username = try Credentials.normalizeUsername(rawUsername)
        try Credentials.validatePassword(password, username: username)
        // A taken name is refused before the (deliberately slow) hash is spent on it; the unique index still
        // decides a race between two registrations.
        if try await store.usernameExists(username) { throw BoardError.usernameTaken }
        // The hash is the costly part: each try that reaches it is counted first (not given back: a try that
        // succeeds leaves nothing more to try).
        _ = try await rateLimiter.acquire(.registrationAttempts, subject: "\(identity.accountID)")
        let passwordHash = try await hasher.hash(password)
        let token = Token.generate()
        let account = try await store.register(
            accountID: identity.accountID, username: username, passwordHash: passwordHash, tokenHash: token.hash, tokenPrefix: token.displayPrefix
        )
        return IssuedToken(account: account, token: token.value)
    }

    /// `POST /v1/sessions`: one answer for unknown users and wrong passwords, in comparable time.
    ///
    /// Every attempt takes a hit of both failed-login limits before the password is checked, so a burst of
    /// parallel guesses gets no more than the limit through. Only a wrong password keeps them: a login that
    /// succeeds, and one that could not be checked (the database or the hashing queue failed), give them back.
    public func login(username rawUsername: String, password: String, clientIP: String) async throws -> IssuedToken {
        let username = rawUsername.lowercased()
        let byUsername = try await rateLimiter.acquire(.failedLoginPerUsername, subject: username)
        let byAddress: RateLimitPermit
        do {
            byAddress = try await rateLimiter.acquire(.failedLoginPerIP, subject: clientIP)
        } catch {
            await rateLimiter.giveBack(byUsername)
            throw error
        }
        let found: (Account, passwordHash: String)?
        let valid: Bool
        do {
            found = try await store.credentials(username: username)
            valid = try await hasher.verify(password, encoded: found?.passwordHash)
        } catch {
            await rateLimiter.giveBack(byUsername)
            await rateLimiter.giveBack(byAddress)
            throw error
        }
        guard valid, let (account, storedHash) = found else { throw BoardError.invalidCredentials }
        await rateLimiter.giveBack(byUsername)
        await rateLimiter.giveBack(byAddress)
        if hasher.needsRehash(storedHash) {
            try await store.updatePasswordHash(accountID: account.id, passwordHash: try await hasher.hash(password))
        }
        let token = Token.generate()
        try await store.addSession(accountID: account.id, tokenHash: token.hash, tokenPrefix: token.displayPrefix)
        return IssuedToken(account: account, token: token.value)
    }

    /// `DELETE /v1/sessions/current`: the caller's token stops working, on every instance, at once.
    public func logout(by caller: Caller) async throws {
        try await store.revokeSession(by: caller)
    }

    public func deleteAccount(by caller: Caller) async throws {
        // No file is touched here: the media sync moves the account's images to the private side within
        // MEDIA_SYNC_SECONDS, and the purger deletes them.
        try await store.delete(by: caller)
    }

    public func account(id: Int) async throws -> Account {
        guard let account = try await store.account(id: id) else { throw BoardError.notFound("account") }
        return account
    }

    /// Blocks account `accountID` for the caller, checked in the same transaction (`Caller`).
    public func block(by caller: Caller, accountID: Int) async throws {
        try await store.block(by: caller, blocked: accountID)
    }

    /// Takes the caller's block of `accountID` off; `notFound` for no such account.
    public func unblock(by caller: Caller, accountID: Int) async throws {
        try await store.unblock(by: caller, blocked: accountID)
    }

    /// "익명" and four random letters and digits, e.g. `익명-k3x9`.
    static func anonymousDisplayName() -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
        let suffix = SecureRandom.bytes(4).map { alphabet[Int($0) % alphabet.count] }
        return "익명-" + String(suffix)
    }
}
