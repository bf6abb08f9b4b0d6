/// Where a post stands: public, held (by the term filter or reports), removed by a moderator.
public enum PostStatus: String, Sendable {
    case visible, hidden, removed
    /// Shown to moderators for a soft-deleted post (the stored status stays what it was).
    case deleted
}
