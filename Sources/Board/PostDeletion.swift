/// What a delete of a post or a reply does (`PostStore.delete`, `PostgresReplyStore.delete`).
public enum PostDeletion: Sendable, Equatable {
    /// Nothing: deleted already.
    case none
    /// The author's own soft delete.
    case own
    /// A moderator's delete of someone else's, logged with it.
    case logged

    /// Who may delete a post or a reply (CONTRACT §4, §13): its author, again and again (`none` once deleted); a
    /// moderator, anyone else's it can see (`notOwner` for anyone else; `notFound`, named `what`, where `shown` is
    /// false, so a delete learns nothing about what the caller cannot see).
    static func decide(authorID: Int, deleted: Bool, shown: Bool, what: String, by identity: Identity) throws -> PostDeletion {
        if authorID == identity.accountID { return deleted ? .none : .own }
        guard shown else { throw BoardError.notFound(what) }
        guard Viewer(identity).isModerator else { throw BoardError.notOwner }
        return deleted ? .none : .logged
    }
}
