/// Where posts live. `PostgresPostStore` is the real one.
public protocol PostStore: Sendable {
    /// Inserts a post for `caller`, checked first in the same transaction (`Caller`); `allow` decides from who it is
    /// (a ban, the idempotency key's scope, the rate limit). With an idempotency key, a replay returns the post the
    /// first request made (`replayed: true`); the same key with a different request throws `idempotencyConflict`.
    func create(
        post: NewPost, status: PostStatus, by caller: Caller,
        allow: @escaping @Sendable (Identity) throws -> (idempotency: IdempotencyKey?, admission: Admission)
    ) async throws -> (Post, replayed: Bool)
    /// Any post by id, deleted or not; `helpedByMe` for `viewer` (false for nil).
    func post(id: Int, viewer: Int?) async throws -> Post?
    /// One post for a reader: as `post(id:viewer:)`, possibly from a standby fresh enough for `viewer` (CONTRACT §12),
    /// and the reader as the read found it (a token still to be checked is checked in the read: `SessionGate`).
    func read(id: Int, viewer: Viewer) async throws -> (Post?, Viewer)
    /// A page of posts the viewer may see in lists, newest first, and the reader as the read found it.
    func list(_ query: PostQuery, viewer: Viewer) async throws -> ([Post], Viewer)
    /// The author's own posts of every status, deleted ones excepted.
    func listOwn(authorID: Int, before: Int?, limit: Int) async throws -> [Post]
    /// Edits a post in one transaction on its locked row (`SELECT … FOR UPDATE`), so edits of one post
    /// happen one after another: `decide` gets the post as it is now and returns what to write, or nil when
    /// nothing changes (or throws to change nothing). A write keeps the replaced version as exactly one
    /// revision and bumps `version`. Throws `notFound` when there is no such post. Returns the post after.
    /// Media taken off the post are deleted in the same transaction; their storage keys are returned so the
    /// caller deletes the files after the commit. `caller` is checked first, in the same transaction (`Caller`), and
    /// `decide` gets who it is.
    func edit(id: Int, by caller: Caller, _ decide: @escaping @Sendable (Post, Identity) throws -> PostEdit?) async throws -> (Post, removedMedia: [String])
    /// Deletes a post as `decide` says, in one transaction that checks `caller` first (`Caller`) and reads the post on
    /// its locked row: the author's soft delete, or a moderator's with its moderation-log entry in one statement (both
    /// happen or neither does). Answers the post as it was and what was done (`none` when it was deleted already).
    func delete(id: Int, by caller: Caller, _ decide: @escaping @Sendable (Post, Identity) throws -> PostDeletion) async throws -> (Post, PostDeletion)
    func revisions(postID: Int) async throws -> [PostRevision]
    /// Marks a post helpful, once per account: a new mark is charged to `admission` in its transaction, a repeat is
    /// free. The mark counts toward ranking when the account is trusted (registered, or anonymous and older than
    /// `trustAgeSeconds`) and not banned. `check` decides, in the same transaction, from what decides who may see
    /// the post (`access`), whether the account may mark it (it throws to refuse). Throws `notFound` when there is
    /// no such post, or it is deleted, or the account gone.
    /// `caller` is checked first, in the same transaction (`Caller`); `check` gets who it is, and answers the
    /// admission for a new mark.
    func markHelpful(
        postID: Int, by caller: Caller, trustAgeSeconds: Int, check: @escaping @Sendable (PostAccess, Identity) throws -> Admission
    ) async throws -> HelpfulState
    /// Takes the caller's mark off the post, if any, once `check` allows it (as for `markHelpful`).
    func unmarkHelpful(postID: Int, by caller: Caller, check: @escaping @Sendable (PostAccess, Identity) throws -> Void) async throws -> HelpfulState
}

extension PostStore {
    /// Any post by id, as a reader without a token sees its marks.
    public func post(id: Int) async throws -> Post? { try await post(id: id, viewer: nil) }
}
