extension Post {
    /// The status the author is shown. A post held by the term filter looks visible to its author, so a
    /// spammer cannot probe the term list; moderators see the real status.
    public func status(shownTo viewer: Viewer) -> PostStatus? {
        if viewer.isModerator { return deleted ? .deleted : status }
        guard viewer.accountID == authorID else { return nil }
        return status == .hidden && hiddenReason == "filter" ? .visible : status
    }
}
