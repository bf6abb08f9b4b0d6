/// Who is reading, for visibility rules.
public struct Viewer: Sendable, Equatable {
    public var accountID: Int?
    public var isModerator: Bool
    /// The WAL position a read for this viewer must see (CONTRACT §12): 0 for anyone (any standby fresh enough), the
    /// account's last write for an account, nil for the primary only (staff: a queue, a decision, must be current).
    public var readsAfter: Int64?

    public init(accountID: Int?, isModerator: Bool, readsAfter: Int64? = 0) {
        self.accountID = accountID
        self.isModerator = isModerator
        self.readsAfter = readsAfter
    }

    public static let anonymous = Viewer(accountID: nil, isModerator: false)

    public init(_ identity: Identity?) {
        self.accountID = identity?.accountID
        // A banned moderator reads like anyone else: no staff powers while banned.
        self.isModerator = identity.map { $0.account.role.canModerate && !$0.account.banned } ?? false
        self.readsAfter = identity.map { isModerator ? nil : $0.account.writeLSN } ?? 0
    }
}
