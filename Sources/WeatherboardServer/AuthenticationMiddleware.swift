import Foundation
import Board
import HTTPTypes
import Hummingbird

/// Resolves the client address and, when an `Authorization: Bearer` header is present, the caller.
/// A token that is sent but unknown or revoked answers 401 even on public routes, so a client learns
/// at once that it must sign in again.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let accounts: AccountService
    let clientAddress: ClientAddress

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        (context.clientIP, context.viaTrustedProxy) = clientAddress.resolve(peer: context.remoteAddress, forwardedFor: request.headers[.xForwardedFor])
        if let authorization = request.headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw BoardError.unauthenticated }
            context.identity = try await accounts.authenticate(bearer: parts[1].trimmingCharacters(in: .whitespaces))
        }
        return try await next(request, context)
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
}
