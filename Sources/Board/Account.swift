import Foundation

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
    /// The primary's WAL position after this account's last write (sql/0025): its reads must see at least that.
    public var writeLSN: Int64

    public init(
        id: Int, kind: AccountKind, username: String?, displayName: String, role: Role, banned: Bool, bannedUntil: Date?, createdAt: Date,
        writeLSN: Int64 = 0
    ) {
        self.id = id
        self.kind = kind
        self.username = username
        self.displayName = displayName
        self.role = role
        self.banned = banned
        self.bannedUntil = bannedUntil
        self.createdAt = createdAt
        self.writeLSN = writeLSN
    }
}
