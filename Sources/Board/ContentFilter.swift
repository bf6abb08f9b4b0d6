/// Decides whether new or edited text is held for review (the moderators' blocked-term list).
public protocol ContentFilter: Sendable {
    /// True when any of the texts contains a blocked term.
    func shouldHold(_ texts: [String]) async throws -> Bool
    /// The current rule as a synchronous check, for decisions made inside a database transaction (an edit
    /// is merged on the locked row, so the text it checks is only known there).
    func holdRule() async throws -> HoldRule
}

/// A snapshot of a content filter's rule.
public struct HoldRule: Sendable {
    let check: @Sendable ([String]) -> Bool

    public init(_ check: @escaping @Sendable ([String]) -> Bool) {
        self.check = check
    }

    /// True when any of the texts would be held.
    public func holds(_ texts: [String]) -> Bool { check(texts) }

    public static let never = HoldRule { _ in false }
}

/// Holds nothing.
public struct NoContentFilter: ContentFilter {
    public init() {}
    public func shouldHold(_ texts: [String]) async throws -> Bool { false }
    public func holdRule() async throws -> HoldRule { .never }
}
