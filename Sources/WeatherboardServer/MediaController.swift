import HTTPTypes
import Board
import Foundation
import Hummingbird
import WeatherboardAPI

/// CONTRACT §8: uploads and the owner's own media.
struct MediaController {
    let media: MediaService
    let urls: MediaURLs
    let maxFileBytes: Int
    let temporaryDirectory: String
    /// `MEDIA_UPLOAD_TIMEOUT_SECONDS`: the whole body must arrive within it.
    let timeLimit: Duration
    let slots: UploadSlots

    /// The upload (`POST /v1/media`), the one request whose body may be larger than 64 KiB and whose whole body is
    /// bounded by `MEDIA_UPLOAD_TIMEOUT_SECONDS` rather than `REQUEST_BODY_DEADLINE_SECONDS`. `path` without its query.
    static func isUpload(method: HTTPRequest.Method, path: some StringProtocol) -> Bool {
        method == .post && path == "/v1/media"
    }

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("media", use: upload)
        routes.get("media/:id", use: show)
        routes.patch("media/:id", use: update)
        routes.delete("media/:id", use: delete)
        return routes
    }

    @Sendable func upload(_ request: Request, context: AppRequestContext) async throws -> Response {
        let identity = try await context.requireIdentity()
        // Refused before a byte of the body is read.
        try media.checkUploader(identity)
        guard let boundary = MultipartUpload.boundary(of: request.headers[.contentType]) else {
            throw APIError(.unsupportedMediaType, "unsupported_media_type", "send multipart/form-data with a `file` part")
        }
        return try await slots.withSlot(accountID: identity.accountID, clientAddress: context.clientIP) {
            let upload = try await MultipartUpload.read(
                request.body, boundary: boundary, maxFileBytes: maxFileBytes, maxFieldBytes: 8 * 1024, temporaryDirectory: temporaryDirectory,
                timeLimit: timeLimit
            )
            defer { upload.removeFile() }
            guard let path = upload.filePath, upload.fileBytes > 0 else { throw APIError.invalidField("file", "is required") }
            let created = try await media.upload(file: path, byteCount: upload.fileBytes, alt: upload.alt, by: identity)
            return jsonResponse(urls.response(created, request: request, context: context), status: .created)
        }
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let found = try await media.media(id: try context.pathID("id", "media"), by: try await context.requireIdentity())
        return jsonResponse(urls.response(found, request: request, context: context))
    }

    @Sendable func update(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let id = try context.pathID("id", "media")
        let body = try await request.decodeJSON(as: PatchMediaRequest.self, context: context)
        let updated = try await media.setAlt(id: id, alt: body.alt, by: caller)
        return jsonResponse(urls.response(updated, request: request, context: context))
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await media.delete(id: try context.pathID("id", "media"), by: try context.requireCaller())
        return noContent()
    }
}
