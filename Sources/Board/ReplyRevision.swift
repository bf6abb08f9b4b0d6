import Foundation

/// A previous version of a reply, kept on every edit (moderators read them in the queue).
public struct ReplyRevision: Sendable, Equatable {
    public var body: String
    public var replacedAt: Date

    public init(body: String, replacedAt: Date) {
        self.body = body
        self.replacedAt = replacedAt
    }
}
