import Foundation

/// A report with the snapshot of the post it was about.
public struct Report: Sendable, Equatable {
    public var id: Int
    public var postID: Int
    /// The reply reported (CONTRACT §13); nil for a report on the post itself.
    public var replyID: Int? = nil
    public var reporterID: Int?
    public var reason: ReportReason
    public var note: String?
    public var reportedTitle: String?
    public var reportedBody: String
    public var outcome: ReportOutcome
    public var createdAt: Date

    public init(id: Int, postID: Int, replyID: Int? = nil, reporterID: Int?, reason: ReportReason, note: String?, reportedTitle: String?, reportedBody: String, outcome: ReportOutcome, createdAt: Date) {
        self.id = id
        self.postID = postID
        self.replyID = replyID
        self.reporterID = reporterID
        self.reason = reason
        self.note = note
        self.reportedTitle = reportedTitle
        self.reportedBody = reportedBody
        self.outcome = outcome
        self.createdAt = createdAt
    }
}
