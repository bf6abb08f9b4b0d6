/// What a delete of a post or a reply does (`PostStore.delete`, `PostgresReplyStore.delete`).
public enum PostDeletion: Sendable, Equatable {
    /// Nothing: deleted already.
    case none
    /// The author's own soft delete.
    case own
    /// A moderator's delete of someone else's, logged with it.
    case logged
}
