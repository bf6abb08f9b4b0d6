import Database

/// Who is reading, for visibility rules.
public struct Viewer: Sendable, Equatable {
    public var accountID: Int?
    public var isModerator: Bool
    /// Where this viewer's reads go (CONTRACT §12).
    public var reads: ReadPolicy
    /// A bearer token still to be checked: the read checks it in its own statement (`SessionGate`), and answers the
    /// viewer it resolved.
    public var gate: SessionGate?

    public init(accountID: Int?, isModerator: Bool, reads: ReadPolicy = .anyStandby) {
        self.accountID = accountID
        self.isModerator = isModerator
        self.reads = reads
    }

    public static let anonymous = Viewer(accountID: nil, isModerator: false)

    /// A reader known only by a token not checked yet (`Visibility.Reader.session`); once the gate has settled, the
    /// reader it found.
    public init(gate: SessionGate) {
        self.init(accountID: nil, isModerator: false)
        self.gate = gate
        if let identity = gate.identity { self = Viewer(identity) }
    }

    /// The gate to check in the read's own statement; nil once the token is checked (or when none was sent).
    public var pendingGate: SessionGate? {
        guard let gate, gate.identity == nil else { return nil }
        return gate
    }

    public static func == (lhs: Viewer, rhs: Viewer) -> Bool {
        lhs.accountID == rhs.accountID && lhs.isModerator == rhs.isModerator && lhs.reads == rhs.reads && lhs.gate === rhs.gate
    }

    public init(_ identity: Identity?) {
        self.accountID = identity?.accountID
        // A banned moderator reads like anyone else: no staff powers while banned.
        self.isModerator = identity.map { $0.account.role.canModerate && !$0.account.banned } ?? false
        self.reads = Self.readPolicy(identity, isModerator: isModerator)
    }

    /// As `init(identity)`, reading under `policy` (a write's own checks read the primary, where the write goes).
    public init(_ identity: Identity?, reads policy: ReadPolicy) {
        self.init(identity)
        reads = policy
    }

    /// Staff read the primary (a queue, a decision, must be current); an account, a standby that has its own last
    /// write (read-your-writes); anyone else, any standby fresh enough.
    static func readPolicy(_ identity: Identity?, isModerator: Bool) -> ReadPolicy {
        guard let identity else { return .anyStandby }
        return isModerator ? .primary : .standby(after: identity.account.writeLSN)
    }
}
