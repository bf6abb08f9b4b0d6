/// Where posts live. `PostgresPostStore` is the real one.
public protocol PostStore: Sendable {
    /// Inserts a post. With an idempotency key, a replay returns the post the first request made
    /// (`replayed: true`); the same key with a different request throws `idempotencyConflict`.
    func create(authorID: Int, post: NewPost, status: PostStatus, idempotency: IdempotencyKey?, admission: Admission) async throws -> (Post, replayed: Bool)
    /// Any post by id, deleted or not.
    func post(id: Int) async throws -> Post?
    /// A page of posts the viewer may see in lists, newest first.
    func list(_ query: PostQuery, viewer: Viewer) async throws -> [Post]
    /// The author's own posts of every status, deleted ones excepted.
    func listOwn(authorID: Int, before: Int?, limit: Int) async throws -> [Post]
    /// Applies an edit, keeping the replaced version as a revision. Returns the new post.
    func update(id: Int, weatherType: WeatherType, category: Category, title: String?, body: String, status: PostStatus?) async throws -> Post
    func softDelete(id: Int, by accountID: Int) async throws
    func revisions(postID: Int) async throws -> [PostRevision]
    /// The region nearest to a point.
    func nearestRegion(lat: Double, lon: Double) async throws -> Int?
    func regionExists(id: Int) async throws -> Bool
    func accountRole(_ accountID: Int) async throws -> Role?
}
