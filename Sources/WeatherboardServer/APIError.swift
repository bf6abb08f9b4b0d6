import HTTPTypes
import Hummingbird

/// An error the client is meant to see, in the contract's JSON shape.
public struct APIError: Error, Sendable, CustomStringConvertible {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    /// Seconds, for `Retry-After` (429, and the 503s a client may simply retry).
    public var retryAfter: Int?

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public var description: String { "\(status.code) \(code): \(message)" }

    public static func badRequest(_ message: String) -> APIError { .init(.badRequest, "bad_request", message) }
    public static func invalidField(_ field: String, _ problem: String) -> APIError {
        .init(.unprocessableContent, "invalid_field", "\(field): \(problem)")
    }
    public static func notFound(_ what: String = "resource") -> APIError { .init(.notFound, "not_found", "\(what) not found") }
    public static let unauthenticated = APIError(.unauthorized, "unauthenticated", "a valid bearer token is required")
    public static func forbidden(_ message: String = "you may not do this") -> APIError { .init(.forbidden, "forbidden", message) }
    /// A full connection queue, a pool timeout or a reconnecting pool: each clears within seconds.
    public static let databaseUnavailable = APIError(
        .serviceUnavailable, "database_unavailable", "the database is unavailable; try again shortly", retryAfter: 1
    )
    public static let bodyTooLarge = APIError(
        .contentTooLarge, "payload_too_large", "the request body is larger than \(AppRequestContext.maxBodyBytes / 1024) KiB"
    )
    public static func requestTimeout(_ message: String) -> APIError { .init(.requestTimeout, "request_timeout", message) }
    /// A request the server cancelled (a shutdown past its grace period); another instance, or this one restarted, answers.
    public static let cancelled = APIError(.serviceUnavailable, "unavailable", "the server stopped this request; try again", retryAfter: 1)
    public static let internalError = APIError(.internalServerError, "internal_error", "an unexpected error occurred; it has been logged")
}
