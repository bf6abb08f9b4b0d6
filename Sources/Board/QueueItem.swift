import Foundation

/// One post in the moderation queue, with every open report on it.
public struct QueueItem: Sendable {
    public var post: Post
    public var revisions: [PostRevision]
    public var reports: [Report]
    public var firstReportedAt: Date
    /// Keyset position: the id of the post's oldest open report.
    public var firstReportID: Int
    /// The reply reported, for a reply's item (`target: "reply"`); `post` is then its post, for context.
    public var reply: Reply? = nil
    public var replyRevisions: [ReplyRevision] = []

    public init(post: Post, revisions: [PostRevision], reports: [Report], firstReportedAt: Date, firstReportID: Int) {
        self.post = post
        self.revisions = revisions
        self.reports = reports
        self.firstReportedAt = firstReportedAt
        self.firstReportID = firstReportID
    }
}
