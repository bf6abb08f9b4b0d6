/// Decides whether new or edited text is held for review (the moderators' blocked-term list).
public protocol ContentFilter: Sendable {
    /// True when any of the texts contains a blocked term.
    func shouldHold(_ texts: [String]) async throws -> Bool
}

/// Holds nothing.
public struct NoContentFilter: ContentFilter {
    public init() {}
    public func shouldHold(_ texts: [String]) async throws -> Bool { false }
}
