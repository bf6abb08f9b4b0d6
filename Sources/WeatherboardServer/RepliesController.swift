import Board
import Hummingbird
import Vocabulary
import WeatherboardAPI

/// CONTRACT §13: replies, reports on them, the inbox, and moderators' decisions on them.
struct RepliesController {
    let replies: ReplyService
    let moderation: ModerationService

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("posts/:id/replies", use: create)
        routes.get("posts/:id/replies", use: list)
        routes.get("replies/:id", use: show)
        routes.patch("replies/:id", use: update)
        routes.delete("replies/:id", use: delete)
        routes.post("replies/:id/reports", use: report)
        routes.get("accounts/me/inbox", use: inbox)
        routes.post("accounts/me/inbox/read", use: markRead)
        routes.post("moderation/replies/:id/decision", use: decide)
        return routes
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let postID = try context.pathID("id", "post")
        let body = try await request.decodeJSON(as: ReplyRequest.self, context: context)
        let (reply, _) = try await replies.create(postID: postID, body: body.body, by: caller, idempotencyKey: request.idempotencyKey)
        return Self.withETag(jsonResponse(ReplyResponse(reply, viewer: context.viewer), status: .created), reply)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        let query = QueryInput(request)
        let (rows, next) = try await replies.list(
            postID: try context.pathID("id", "post"), after: try query.cursor(), limit: try query.pageLimit(), viewer: context.viewer
        )
        let viewer = context.viewer
        return jsonResponse(Page(items: rows.map { ReplyResponse($0, viewer: viewer) }, nextCursor: next))
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let reply = try await replies.reply(id: try context.pathID("id", "reply"), viewer: context.viewer)
        return Self.withETag(jsonResponse(ReplyResponse(reply, viewer: context.viewer)), reply)
    }

    @Sendable func update(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let id = try context.pathID("id", "reply")
        let body = try await request.decodeJSON(as: ReplyRequest.self, context: context)
        let precondition = PostETag.precondition(ifMatch: request.headers[values: .ifMatch], postID: id)
        let reply = try await replies.update(id: id, body: body.body, precondition: precondition, by: caller)
        return Self.withETag(jsonResponse(ReplyResponse(reply, viewer: context.viewer)), reply)
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        try await replies.delete(id: try context.pathID("id", "reply"), by: caller)
        return noContent()
    }

    @Sendable func report(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let replyID = try context.pathID("id", "reply")
        let body = try await request.decodeJSON(as: ReportRequest.self, context: context)
        let (report, created) = try await moderation.reportReply(replyID: replyID, reason: body.reason, note: body.note, by: caller)
        return try jsonResponse(ReportResponse(report), status: created ? .created : .ok)
    }

    @Sendable func inbox(_ request: Request, context: AppRequestContext) async throws -> Response {
        let query = QueryInput(request)
        // The inbox's own statement checks the token (`SessionGate`); with none, 401.
        let page = try await replies.inbox(context.viewer, before: try query.cursor(), limit: try query.pageLimit())
        let viewer = context.viewer
        return jsonResponse(
            InboxResponse(
                items: page.replies.map { ReplyResponse($0, viewer: viewer, inbox: true) }, nextCursor: page.nextCursor, unread: page.unread,
                unreadCapped: page.unreadCapped
            )
        )
    }

    @Sendable func markRead(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await request.decodeJSON(as: InboxReadRequest.self, context: context)
        guard let raw = body.upTo else { throw APIError.invalidField("upTo", "is required") }
        // Ids are canonical decimal strings; anything else names no reply.
        guard let upTo = CanonicalID.parse(raw) else { throw APIError.invalidField("upTo", "names no reply in your inbox") }
        let (unread, capped) = try await replies.markRead(by: caller, upTo: upTo)
        return try jsonResponse(InboxUnreadResponse(unread: unread, unreadCapped: capped))
    }

    @Sendable func decide(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let replyID = try context.pathID("id", "reply")
        let body = try await request.decodeJSON(as: DecisionRequest.self, context: context)
        let (reply, resolved) = try await moderation.decide(replyID: replyID, action: body.action, note: body.note, by: caller)
        let revisions = try await replies.revisions(replyID: replyID)
        return jsonResponse(ReplyDecisionResponse(reply: ReplyResponse(reply, viewer: context.viewer, revisions: revisions), resolvedReports: resolved))
    }

    /// A reply's entity tag, as a post's (`"<id>-<version>"`).
    static func withETag(_ response: Response, _ reply: Reply) -> Response {
        var response = response
        response.headers[.eTag] = PostETag.value(id: reply.id, version: reply.version)
        return response
    }
}
