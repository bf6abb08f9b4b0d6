import Vocabulary

/// Where a new post's conditions come from (CONTRACT §9): the server's weather cache, behind this so the board
/// does not know the weather module. An implementation answers within its own time limit and never throws: no
/// weather is nil, and the post is created without conditions.
public protocol ConditionsSource: Sendable {
    /// The region's weather now, for a post `clientAddress` is creating (the upstream budget counts per client).
    func conditions(regionID: Int, clientAddress: String?) async -> PostConditions?
}
