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
    /// With standbys (`DATABASE_READ_URL`): after a write request of an account, note the primary's WAL position for
    /// its reads (read-your-writes on every instance, CONTRACT §12).
    var recordWrites = false

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        (context.clientIP, context.viaTrustedProxy) = clientAddress.resolve(peer: context.remoteAddress, forwardedFor: request.headers[.xForwardedFor])
        if let authorization = request.headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw BoardError.unauthenticated }
            context.identity = try await accounts.authenticate(bearer: parts[1].trimmingCharacters(in: .whitespaces))
        }
        let response = try await next(request, context)
        if recordWrites, let identity = context.identity, ![.get, .head, .options].contains(request.method) {
            do {
                try await accounts.recordWrite(by: identity)
            } catch {
                // The write itself committed: answer it. Reads may then lag by at most DATABASE_MAX_REPLICA_LAG_MS.
                context.logger.warning("could not note the write's WAL position", metadata: ["error": "\(error)"])
            }
        }
        return response
    }
}

extension HTTPField.Name {
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
}
