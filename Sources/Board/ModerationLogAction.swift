/// What a line of the moderation log records (`moderation_log.action`).
public enum ModerationLogAction: String, Sendable, CaseIterable {
    /// A decision on a reported post (`ModerationAction`).
    case dismiss, remove, restore
    /// A moderator's delete of someone else's post.
    case delete
    case ban, unban
    /// An operator's `weatherboard roles grant|revoke`.
    case setRole = "set_role"

    public init(_ decision: ModerationAction) {
        switch decision {
        case .dismiss: self = .dismiss
        case .remove: self = .remove
        case .restore: self = .restore
        }
    }
}

/// What a line of the moderation log is about (`moderation_log.target_type`).
public enum ModerationLogTarget: String, Sendable, CaseIterable {
    case post, reply, account, term
}
