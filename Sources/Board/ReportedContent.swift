/// What a report names, as its transaction read it on its locked row (`PostgresModerationStore.file`): what decides
/// whether the reporter may see it, and its author.
public enum ReportedContent: Sendable {
    case post(PostAccess)
    case reply(Reply)

    public var authorID: Int {
        switch self {
        case .post(let access): access.authorID
        case .reply(let reply): reply.authorID
        }
    }

    /// Its stored status (a report may hide a visible one).
    public var status: PostStatus {
        switch self {
        case .post(let access): access.state.status
        case .reply(let reply): reply.status
        }
    }

    public var isDeleted: Bool {
        switch self {
        case .post(let access): access.state == .deleted
        case .reply(let reply): reply.deleted
        }
    }

    /// Whether `viewer` may see it (the one rule, `Visibility`).
    public func isShown(to viewer: Viewer) -> Bool {
        switch self {
        case .post(let access): Visibility(viewer).shows(access.state, authorID: access.authorID)
        case .reply(let reply): reply.isShown(to: viewer)
        }
    }
}
