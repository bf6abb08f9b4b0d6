import Board
import Hummingbird
import NIOCore

/// `GET /v1/moderation/media/{id}` and `…/preview`: any media's image, whatever its post's state, for
/// moderators only (the queue's media objects point here).
struct ModerationMediaController {
    let media: MediaService

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("moderation/media/:id") { request, context in try await serve(.full, request, context) }
        routes.get("moderation/media/:id/preview") { request, context in try await serve(.preview, request, context) }
        return routes
    }

    func serve(_ variant: MediaFiles.Variant, _ request: Request, _ context: AppRequestContext) async throws -> Response {
        let bytes = try await media.moderatorFile(id: try context.pathID("id", "media"), variant: variant, by: try await context.requireIdentity())
        return Response(
            status: .ok,
            headers: [.contentType: "image/jpeg", .cacheControl: "private, no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }
}
