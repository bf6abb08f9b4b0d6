/// What the live board reads (`PostgresStreamStore` in production; an in-memory board in the tests).
public protocol LiveBoardStore: Sendable {
    /// The events after `position`, in commit order, at most `limit`.
    func events(after position: StreamPosition, limit: Int) async throws -> [StreamEvent]
    /// The events in (`after`, `through`], in order, at most `limit`.
    func events(after: StreamPosition, through: StreamPosition, limit: Int) async throws -> [StreamEvent]
    /// Whether a client may resume after `position` (nothing after it trimmed, not beyond the last event).
    func canResume(after position: StreamPosition) async throws -> Bool
    /// The last event committed.
    func latest() async throws -> StreamPosition
    /// Posts as they are now, whatever their state.
    func posts(ids: [Int]) async throws -> [Int: Post]
    /// Replies as they are now, whatever their state.
    func replies(ids: [Int]) async throws -> [Int: Reply]
    /// The queue items of these posts and replies.
    func queueItems(postIDs: [Int], replyIDs: [Int]) async throws -> [QueueItem]
    /// Which of `accounts` marked `postID` helpful.
    func helpfulMarks(postID: Int, accounts: [Int]) async throws -> Set<Int>
    /// The authors `accountID` blocks.
    func blockedAuthors(of accountID: Int) async throws -> Set<Int>
    /// An author's undeleted posts, newest first, at most `limit`.
    func postsOf(author: Int, limit: Int) async throws -> [(id: Int, regionID: Int, snapshot: StreamEvent.Snapshot)]
}
