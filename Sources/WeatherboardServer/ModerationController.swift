import Board
import Hummingbird
import Vocabulary
import WeatherboardAPI

/// CONTRACT §5: reports, and the moderator API (role moderator or admin; 403 `forbidden` otherwise).
struct ModerationController {
    let mediaURLs: MediaURLs
    let moderation: ModerationService
    let posts: PostService

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("posts/:id/reports", use: report)
        routes.get("accounts/me/reports", use: myReports)
        routes.get("moderation/queue", use: queue)
        routes.post("moderation/posts/:id/decision", use: decide)
        routes.post("moderation/accounts/:id/ban", use: ban)
        routes.delete("moderation/accounts/:id/ban", use: unban)
        routes.get("moderation/log", use: log)
        return routes
    }

    @Sendable func report(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let postID = try context.pathID("id", "post")
        let body = try await request.decodeJSON(as: ReportRequest.self, context: context)
        let (report, created) = try await moderation.report(postID: postID, reason: body.reason, note: body.note, by: caller)
        return try jsonResponse(ReportResponse(report), status: created ? .created : .ok)
    }

    @Sendable func myReports(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try await context.requireIdentity()
        let query = QueryInput(request)
        let (reports, next) = try await moderation.myReports(identity, before: try query.cursor(), limit: try query.pageLimit())
        return try jsonResponse(Page(items: reports.map(ReportResponse.init), nextCursor: next))
    }

    @Sendable func queue(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try await context.requireIdentity()
        let query = QueryInput(request)
        let (items, next) = try await moderation.queue(identity, after: try query.cursor(), limit: try query.pageLimit())
        let viewer = context.viewer
        let language = request.language
        let links = mediaURLs.links(request, context, moderator: true)
        let wire = items.map { QueueItemResponse($0, viewer: viewer, language: language, media: links) }
        return jsonResponse(Page(items: wire, nextCursor: next))
    }

    @Sendable func decide(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let postID = try context.pathID("id", "post")
        let body = try await request.decodeJSON(as: DecisionRequest.self, context: context)
        let (post, resolved) = try await moderation.decide(postID: postID, action: body.action, note: body.note, by: caller)
        let revisions = try await posts.revisions(postID: postID)
        return jsonResponse(
            DecisionResponse(post: PostResponse(post, viewer: context.viewer, language: request.language, media: mediaURLs.links(request, context, moderator: true), revisions: revisions), resolvedReports: resolved)
        )
    }

    @Sendable func ban(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let accountID = try context.pathID("id", "account")
        let body = try await request.decodeJSON(as: BanRequest.self, context: context)
        let account = try await moderation.ban(accountID: accountID, until: body.until, reason: body.reason, by: caller)
        return try jsonResponse(AccountResponse(account))
    }

    @Sendable func unban(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        try await moderation.unban(accountID: try context.pathID("id", "account"), by: caller)
        return noContent()
    }

    @Sendable func log(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try await context.requireIdentity()
        let query = QueryInput(request)
        let (entries, next) = try await moderation.log(identity, before: try query.cursor(), limit: try query.pageLimit())
        return try jsonResponse(Page(items: entries.map(ModerationLogResponse.init), nextCursor: next))
    }
}

extension QueueItemResponse {
    /// A queue item as moderators see it: a post with its revisions, or a reply with its revisions and its post.
    init(_ item: QueueItem, viewer: Viewer, language: Language, media: MediaLinks) {
        self.init(
            post: PostResponse(item.post, viewer: viewer, language: language, media: media, revisions: item.reply == nil ? item.revisions : nil),
            reply: item.reply.map { ReplyResponse($0, viewer: viewer, revisions: item.replyRevisions) },
            reports: item.reports.map(QueueReportResponse.init),
            openReportCount: item.reports.count,
            firstReportedAt: item.firstReportedAt
        )
    }
}

extension ReportResponse {
    init(_ report: Report) {
        self.init(id: String(report.id), postId: String(report.postID), replyId: report.replyID.map(String.init), reason: report.reason.rawValue, note: report.note, outcome: report.outcome.rawValue, createdAt: report.createdAt)
    }
}

extension QueueReportResponse {
    init(_ report: Report) {
        self.init(
            id: String(report.id), reason: report.reason.rawValue, note: report.note, reporterId: report.reporterID.map(String.init),
            reportedTitle: report.reportedTitle, reportedBody: report.reportedBody, createdAt: report.createdAt
        )
    }
}

extension ModerationLogResponse {
    init(_ entry: ModerationLogEntry) {
        self.init(
            id: String(entry.id), moderatorId: entry.moderatorID.map(String.init), action: entry.action.rawValue, targetType: entry.targetType.rawValue,
            targetId: entry.targetID, note: entry.note, createdAt: entry.createdAt
        )
    }
}
