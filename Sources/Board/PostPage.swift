/// One page of posts and the cursor to the next.
public struct PostPage: Sendable {
    public var posts: [Post]
    public var nextCursor: String?

    public init(posts: [Post], nextCursor: String?) {
        self.posts = posts
        self.nextCursor = nextCursor
    }
}
