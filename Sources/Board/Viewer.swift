/// Who is reading, for visibility rules.
public struct Viewer: Sendable, Equatable {
    public var accountID: Int?
    public var isModerator: Bool

    public init(accountID: Int?, isModerator: Bool) {
        self.accountID = accountID
        self.isModerator = isModerator
    }

    public static let anonymous = Viewer(accountID: nil, isModerator: false)

    public init(_ identity: Identity?) {
        self.accountID = identity?.accountID
        // A banned moderator reads like anyone else: no staff powers while banned.
        self.isModerator = identity.map { $0.account.role.canModerate && !$0.account.banned } ?? false
    }
}
