import Foundation

/// `Account` object of CONTRACT §3.
public struct AccountResponse: Codable, Sendable, Equatable {
    public var id: String
    public var kind: String
    public var username: String?
    public var displayName: String
    public var role: String
    public var banned: Bool
    public var bannedUntil: Date?
    public var createdAt: Date

    public init(id: String, kind: String, username: String?, displayName: String, role: String, banned: Bool, bannedUntil: Date?, createdAt: Date) {
        self.id = id
        self.kind = kind
        self.username = username
        self.displayName = displayName
        self.role = role
        self.banned = banned
        self.bannedUntil = bannedUntil
        self.createdAt = createdAt
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(kind, forKey: .kind)
        try c.encode(username, forKey: .username)
        try c.encode(displayName, forKey: .displayName)
        try c.encode(role, forKey: .role)
        try c.encode(banned, forKey: .banned)
        try c.encode(bannedUntil, forKey: .bannedUntil)
        try c.encode(createdAt, forKey: .createdAt)
    }
}

/// `{account, token}`: the token is shown once.
public struct AuthResponse: Codable, Sendable {
    public var account: AccountResponse
    public var token: String

    public init(account: AccountResponse, token: String) {
        self.account = account
        self.token = token
    }
}

/// `POST /v1/accounts/me/credentials` and `POST /v1/sessions`.
public struct CredentialsRequest: Codable, Sendable {
    public var username: String
    public var password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

/// `POST /v1/accounts/me/blocks`.
public struct BlockRequest: Codable, Sendable {
    public var accountId: String
    public init(accountId: String) { self.accountId = accountId }
}
