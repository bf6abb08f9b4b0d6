/// What decides who may see a post (`PostService.canSee`): its author, its status, and whether it is deleted.
public struct PostAccess: Sendable, Equatable {
    public var authorID: Int
    public var status: PostStatus
    public var deleted: Bool

    public init(authorID: Int, status: PostStatus, deleted: Bool) {
        self.authorID = authorID
        self.status = status
        self.deleted = deleted
    }
}
