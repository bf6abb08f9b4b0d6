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
