extension Post {
    /// The post's state as `Visibility` reads it.
    public var state: ContentState { ContentState(status: status, hiddenReason: hiddenReason, deleted: deleted) }

    /// The status `viewer` is shown (`Visibility.status`).
    public func status(shownTo viewer: Viewer) -> PostStatus? {
        Visibility(viewer).status(state, authorID: authorID)
    }
}
