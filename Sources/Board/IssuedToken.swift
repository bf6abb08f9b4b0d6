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
