import Foundation

public enum AccountKind: String, Sendable, Codable {
    case anonymous
    case registered
}

public enum Role: String, Sendable, Codable, CaseIterable {
    case member
    case moderator
    case admin

    public var canModerate: Bool { self != .member }
}

/// An account as the board sees it.
public struct Account: Sendable, Equatable {
    public var id: Int
    public var kind: AccountKind
    public var username: String?
    public var displayName: String
    public var role: Role
    /// True while a ban is in force (a ban whose end passed is lifted by itself).
    public var banned: Bool
    public var bannedUntil: Date?
    public var createdAt: Date

    public init(id: Int, kind: AccountKind, username: String?, displayName: String, role: Role, banned: Bool, bannedUntil: Date?, createdAt: Date) {
        self.id = id
        self.kind = kind
        self.username = username
        self.displayName = displayName
        self.role = role
        self.banned = banned
        self.bannedUntil = bannedUntil
        self.createdAt = createdAt
    }
}

/// The caller behind a valid bearer token.
public struct Identity: Sendable, Equatable {
    public var account: Account
    public var sessionID: Int

    public init(account: Account, sessionID: Int) {
        self.account = account
        self.sessionID = sessionID
    }

    public var accountID: Int { account.id }

    /// Throws `accountBanned` for a banned caller: they may read, not write.
    public func requireNotBanned() throws {
        if account.banned {
            throw BoardError.accountBanned(until: account.bannedUntil.map { $0.formatted(.iso8601) })
        }
    }

    /// Staff powers: the moderator or admin role, and no ban in force (a banned moderator or admin has no
    /// staff powers while banned: `accountBanned`).
    public func requireModerator() throws {
        guard account.role.canModerate else { throw BoardError.forbidden("this needs the moderator or admin role") }
        try requireNotBanned()
    }
}

/// A freshly issued token with its account: the only time the token exists in plain text.
public struct IssuedToken: Sendable {
    public var account: Account
    public var token: String
    /// True when an `Idempotency-Key` replay found the account made by an earlier request.
    public var replayed: Bool

    public init(account: Account, token: String, replayed: Bool = false) {
        self.account = account
        self.token = token
        self.replayed = replayed
    }
}
