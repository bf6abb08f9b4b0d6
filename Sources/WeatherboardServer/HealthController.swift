import Database
import Hummingbird
import NIOCore

/// `GET /healthz` (the process is up) and `GET /readyz` (the database answers within a second).
struct HealthController {
    let database: PostgresPool

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("healthz") { _, _ in Self.okResponse() }
        routes.get("readyz", use: readyz)
        return routes
    }

    @Sendable func readyz(_ request: Request, context: AppRequestContext) async throws -> Response {
        do {
            _ = try await database.query("SELECT 1", timeoutMilliseconds: 1000)
        } catch is PostgresError {
            throw APIError.databaseUnavailable
        }
        return Self.okResponse()
    }

    private static let okBody = ByteBuffer(string: #"{"status":"ok"}"#)

    static func okResponse() -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: okBody))
    }
}
