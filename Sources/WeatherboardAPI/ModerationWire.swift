import Foundation

/// `POST /v1/posts/{id}/reports`.
public struct ReportRequest: Codable, Sendable {
    public var reason: String
    public var note: String?
    public init(reason: String, note: String? = nil) {
        self.reason = reason
        self.note = note
    }
}

/// A report as its reporter sees it (`GET /v1/accounts/me/reports`), with its outcome.
public struct ReportResponse: Codable, Sendable {
    public var id: String
    /// `post` or `reply` (CONTRACT §13).
    public var target: String
    /// The post reported, or the post of the reply reported.
    public var postId: String
    /// The reply reported; `null` for a report on a post.
    public var replyId: String?
    public var reason: String
    public var note: String?
    /// `open`, `dismissed` or `actioned`.
    public var outcome: String
    public var createdAt: Date

    public init(id: String, postId: String, replyId: String? = nil, reason: String, note: String?, outcome: String, createdAt: Date) {
        self.id = id
        self.target = replyId == nil ? "post" : "reply"
        self.replyId = replyId
        self.postId = postId
        self.reason = reason
        self.note = note
        self.outcome = outcome
        self.createdAt = createdAt
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(target, forKey: .target)
        try c.encode(postId, forKey: .postId)
        try c.encode(replyId, forKey: .replyId)
        try c.encode(reason, forKey: .reason)
        try c.encode(note, forKey: .note)
        try c.encode(outcome, forKey: .outcome)
        try c.encode(createdAt, forKey: .createdAt)
    }
}

/// A report in the moderation queue, with the snapshot of the post as reported.
public struct QueueReportResponse: Decodable, Sendable {
    public var id: String
    public var reason: String
    public var note: String?
    /// `null` for the term filter's own reports and for reporters who deleted their account.
    public var reporterId: String?
    public var reportedTitle: String?
    public var reportedBody: String
    public var createdAt: Date

    public init(id: String, reason: String, note: String?, reporterId: String?, reportedTitle: String?, reportedBody: String, createdAt: Date) {
        self.id = id
        self.reason = reason
        self.note = note
        self.reporterId = reporterId
        self.reportedTitle = reportedTitle
        self.reportedBody = reportedBody
        self.createdAt = createdAt
    }
}

/// One item of `GET /v1/moderation/queue`.
public struct QueueItemResponse: Decodable, Sendable {
    /// `post` or `reply` (CONTRACT §13).
    public var target: String
    /// The post reported; for a reply's item, the reply's post, for context.
    public var post: PostResponse
    /// The reply reported (with `status` and `revisions`), in a reply's item only.
    public var reply: ReplyResponse?
    public var reports: [QueueReportResponse]
    public var openReportCount: Int
    public var firstReportedAt: Date

    enum CodingKeys: String, CodingKey {
        case target, post, reply, reports, openReportCount, firstReportedAt
    }

    /// An item without `target` (a server from before replies) is a post's.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        target = try c.decodeIfPresent(String.self, forKey: .target) ?? "post"
        post = try c.decode(PostResponse.self, forKey: .post)
        reply = try c.decodeIfPresent(ReplyResponse.self, forKey: .reply)
        reports = try c.decode([QueueReportResponse].self, forKey: .reports)
        openReportCount = try c.decode(Int.self, forKey: .openReportCount)
        firstReportedAt = try c.decode(Date.self, forKey: .firstReportedAt)
    }

    public init(post: PostResponse, reply: ReplyResponse? = nil, reports: [QueueReportResponse], openReportCount: Int, firstReportedAt: Date) {
        self.target = reply == nil ? "post" : "reply"
        self.reply = reply
        self.post = post
        self.reports = reports
        self.openReportCount = openReportCount
        self.firstReportedAt = firstReportedAt
    }
}

/// `POST /v1/moderation/posts/{id}/decision`.
public struct DecisionRequest: Codable, Sendable {
    public var action: String
    public var note: String?
    public init(action: String, note: String? = nil) {
        self.action = action
        self.note = note
    }
}

public struct DecisionResponse: Decodable, Sendable {
    public var post: PostResponse
    public var resolvedReports: Int
    public init(post: PostResponse, resolvedReports: Int) {
        self.post = post
        self.resolvedReports = resolvedReports
    }
}

/// `POST /v1/moderation/accounts/{id}/ban`: `until` null (or absent) is permanent.
public struct BanRequest: Codable, Sendable {
    public var until: Date?
    public var reason: String
    public init(until: Date?, reason: String) {
        self.until = until
        self.reason = reason
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(until, forKey: .until)
        try c.encode(reason, forKey: .reason)
    }
}

/// A line of `GET /v1/moderation/log`.
public struct ModerationLogResponse: Codable, Sendable {
    public var id: String
    /// `null` for operator actions taken with the `weatherboard` command.
    public var moderatorId: String?
    public var action: String
    public var targetType: String
    public var targetId: String
    public var note: String?
    public var createdAt: Date

    public init(id: String, moderatorId: String?, action: String, targetType: String, targetId: String, note: String?, createdAt: Date) {
        self.id = id
        self.moderatorId = moderatorId
        self.action = action
        self.targetType = targetType
        self.targetId = targetId
        self.note = note
        self.createdAt = createdAt
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(moderatorId, forKey: .moderatorId)
        try c.encode(action, forKey: .action)
        try c.encode(targetType, forKey: .targetType)
        try c.encode(targetId, forKey: .targetId)
        try c.encode(note, forKey: .note)
        try c.encode(createdAt, forKey: .createdAt)
    }
}

// MARK: The one encoding of the types that hold a post (keys sorted)

extension QueueReportResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("createdAt", first: true)
        w.date(createdAt)
        w.key("id")
        w.string(id)
        w.key("note")
        w.optionalString(note)
        w.key("reason")
        w.string(reason)
        w.key("reportedBody")
        w.string(reportedBody)
        w.key("reportedTitle")
        w.optionalString(reportedTitle)
        w.key("reporterId")
        w.optionalString(reporterId)
        w.raw("}")
    }
}

extension QueueItemResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("firstReportedAt", first: true)
        w.date(firstReportedAt)
        w.key("openReportCount")
        w.int(openReportCount)
        w.key("post")
        post.write(to: &w)
        if let reply {
            w.key("reply")
            reply.write(to: &w)
        }
        w.key("reports")
        w.array(reports)
        w.key("target")
        w.string(target)
        w.raw("}")
    }
}

extension DecisionResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("post", first: true)
        post.write(to: &w)
        w.key("resolvedReports")
        w.int(resolvedReports)
        w.raw("}")
    }
}
