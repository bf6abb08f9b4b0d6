/// A limit: at most `limit` hits in any `windowSeconds` for one subject (a client address, an account,
/// a username).
public struct RateLimitPolicy: Sendable, Hashable {
    public var name: String
    public var limit: Int
    public var windowSeconds: Int

    public init(name: String, limit: Int, windowSeconds: Int) {
        self.name = name
        self.limit = limit
        self.windowSeconds = windowSeconds
    }
}
