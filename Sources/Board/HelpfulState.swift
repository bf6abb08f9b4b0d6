/// A post's helpful marks as its reader sees them after marking or unmarking it (CONTRACT §9).
public struct HelpfulState: Sendable, Equatable {
    public var helpfulCount: Int
    public var helpedByMe: Bool

    public init(helpfulCount: Int, helpedByMe: Bool) {
        self.helpfulCount = helpfulCount
        self.helpedByMe = helpedByMe
    }
}
