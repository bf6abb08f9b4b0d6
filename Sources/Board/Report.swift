import Foundation

public enum ReportReason: String, Sendable, CaseIterable {
    case spam, abuse, hate, sexual, misinformation, other
    /// Filed by the term filter, never by a person.
    case filter
}

public enum ReportOutcome: String, Sendable {
    case open, dismissed, actioned
}

/// A report with the snapshot of the post it was about.
public struct Report: Sendable, Equatable {
    public var id: Int
    public var postID: Int
    public var reporterID: Int?
    public var reason: String
    public var note: String?
    public var reportedTitle: String?
    public var reportedBody: String
    public var outcome: ReportOutcome
    public var createdAt: Date

    public init(id: Int, postID: Int, reporterID: Int?, reason: String, note: String?, reportedTitle: String?, reportedBody: String, outcome: ReportOutcome, createdAt: Date) {
        self.id = id
        self.postID = postID
        self.reporterID = reporterID
        self.reason = reason
        self.note = note
        self.reportedTitle = reportedTitle
        self.reportedBody = reportedBody
        self.outcome = outcome
        self.createdAt = createdAt
    }
}

/// One post in the moderation queue, with every open report on it.
public struct QueueItem: Sendable {
    public var post: Post
    public var revisions: [PostRevision]
    public var reports: [Report]
    public var firstReportedAt: Date
    /// Keyset position: the id of the post's oldest open report.
    public var firstReportID: Int

    public init(post: Post, revisions: [PostRevision], reports: [Report], firstReportedAt: Date, firstReportID: Int) {
        self.post = post
        self.revisions = revisions
        self.reports = reports
        self.firstReportedAt = firstReportedAt
        self.firstReportID = firstReportID
    }
}

public enum ModerationAction: String, Sendable {
    case dismiss, remove, restore
}

/// A line of the moderation log.
public struct ModerationLogEntry: Sendable, Equatable {
    public var id: Int
    public var moderatorID: Int?
    public var action: String
    public var targetType: String
    public var targetID: String
    public var note: String?
    public var createdAt: Date

    public init(id: Int, moderatorID: Int?, action: String, targetType: String, targetID: String, note: String?, createdAt: Date) {
        self.id = id
        self.moderatorID = moderatorID
        self.action = action
        self.targetType = targetType
        self.targetID = targetID
        self.note = note
        self.createdAt = createdAt
    }
}

/// Rules that decide when reports hide a post.
public struct ReportPolicy: Sendable {
    /// Trusted distinct reporters of open reports that hide a post at once (`REPORT_HIDE_THRESHOLD`).
    public var hideThreshold: Int
    /// Anonymous accounts older than this are trusted reporters (`REPORT_TRUST_AGE_SECONDS`).
    public var trustAgeSeconds: Int

    public init(hideThreshold: Int = 3, trustAgeSeconds: Int = 86_400) {
        self.hideThreshold = hideThreshold
        self.trustAgeSeconds = trustAgeSeconds
    }
}
