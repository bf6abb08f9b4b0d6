import Foundation
import Board
import HTTPTypes
import Hummingbird

/// Resolves the client address and, when an `Authorization: Bearer` header is present, the caller.
/// A token that is sent but unknown or revoked answers 401 even on public routes, so a client learns
/// at once that it must sign in again.
///
/// No token is checked here, before the handler: a read's (GET, HEAD) is checked by the read's own statement
/// (`SessionGate`: one trip through the data layer, as a token-less read), a write's by the first statement of its
/// transaction (`Caller`), and a handler that needs its caller before either checks it by a statement of its own
/// (`requireIdentity`, `refuseRevokedToken`) before it does anything. One that nothing checked, on a route that reads
/// nothing through a gate or that failed first, is checked here after the handler, and a refusal replaces the
/// handler's answer. So nothing is answered to a refused token but 401.
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
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                accounts.sessionChecks.add(.refused)
                throw BoardError.unauthenticated
            }
            context.gate = try accounts.gate(bearer: parts[1].trimmingCharacters(in: .whitespaces))
        }
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            // An error before any read checked the token: a refused token still answers 401. A check that cannot run
            // (the database unreachable) leaves the first error standing.
            if let gate = context.gate {
                do {
                    _ = try await gate.resolve()
                } catch BoardError.unauthenticated {
                    throw BoardError.unauthenticated
                } catch {}
            }
            throw error
        }
        if let gate = context.gate { _ = try await gate.resolve() }
        if recordWrites, let identity = context.gate?.identity, ![.get, .head, .options].contains(request.method) {
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
