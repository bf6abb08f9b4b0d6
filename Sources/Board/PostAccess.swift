/// A post's row as `Visibility` decides on it, without the author, region and images a read joins (the calls that only
/// act on a post: helpful marks, replies).
public struct PostAccess: Sendable, Equatable {
    public var authorID: Int
    public var state: ContentState

    public init(authorID: Int, state: ContentState) {
        self.authorID = authorID
        self.state = state
    }
}
