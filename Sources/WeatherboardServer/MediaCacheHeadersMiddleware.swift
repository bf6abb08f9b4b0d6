import Hummingbird

/// Files under `/media/` never change (a new image gets a new key): `Cache-Control: public,
/// max-age=31536000, immutable` on every one the file middleware serves. Other responses pass untouched.
struct MediaCacheHeadersMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    static let value = "public, max-age=31536000, immutable"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if response.status == .ok || response.status == .notModified || response.status == .partialContent,
            request.uri.path.hasPrefix("/media/")
        {
            response.headers[.cacheControl] = Self.value
        }
        return response
    }
}
