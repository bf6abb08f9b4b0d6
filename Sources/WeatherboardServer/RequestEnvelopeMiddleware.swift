import Board
import Database
import Foundation
import HTTPTypes
import Hummingbird
import Imaging
import MediaStorage
import Logging
import NIOCore
import RateLimit
import Weather
import WeatherboardAPI

/// The outermost middleware. For every request it
/// - echoes the client's `X-Request-Id` (if sane) or makes one, and puts it on the response;
/// - turns every error into the contract's JSON error body (unexpected ones are logged, with the request id,
///   and answer 500);
/// - writes one log line: method, path, status, duration and request id.
struct RequestEnvelopeMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let logger: Logger
    let metrics: AppMetrics
    /// The largest upload body (`POST /v1/media`): `MEDIA_MAX_BYTES` plus room for the form around the file.
    /// Every other body is limited by the context's `maxUploadSize`.
    var maxUploadBodyBytes: Int = 16 * 1024 * 1024 + MultipartUpload.framingAllowanceBytes

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var context = context
        let requestID = Self.requestID(from: request.headers[.requestID])
        context.requestID = requestID
        var response: Response
        do {
            // A target the connection's first request would have been refused for as it arrived (`ConnectionGuard`).
            if let target = request.head.path, target.utf8.count > ConnectionDeadlines.maxTargetBytes {
                throw APIError(.uriTooLong, "uri_too_long", ConnectionGuard.targetTooLongMessage(ConnectionDeadlines()))
            }
            // Refuse an announced oversized body before reading it; chunked bodies hit `maxUploadSize`.
            let isUpload = MediaController.isUpload(method: request.method, path: request.uri.path)
            let limit = isUpload ? maxUploadBodyBytes : context.maxUploadSize
            if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
                throw isUpload ? APIError(.contentTooLarge, "payload_too_large", "the request body is larger than the upload limit") : .bodyTooLarge
            }
            response = try await next(request, context)
        } catch {
            response = errorResponse(for: error, request: request, requestID: requestID)
            // The rest of a body that stopped is not read: the connection ends after the 408.
            if error is RequestBodyTimeout { response.headers[.connection] = "close" }
        }
        response.headers[.requestID] = requestID
        let elapsed = ContinuousClock.now - start
        metrics.recordRequest(method: request.method.rawValue, route: context.endpointPath ?? "unmatched", status: Int(response.status.code), duration: elapsed)
        if logger.logLevel <= .info {
            let ms = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
            logger.info(
                "request",
                metadata: [
                    "method": "\(request.method.rawValue)",
                    "path": "\(request.uri.path)",
                    "status": "\(response.status.code)",
                    "duration_ms": "\((ms * 100).rounded() / 100)",
                    "request_id": "\(requestID)",
                ]
            )
        }
        return response
    }

    /// Maps any error to a status, code and message. Only bugs become 500.
    func errorResponse(for error: any Error, request: Request, requestID: String) -> Response {
        let apiError: APIError
        switch error {
        case let error as APIError:
            apiError = error
        case let error as RequestBodyTimeout:
            apiError = error.apiError
        case let error as BoardError:
            apiError = APIError(error)
        case let error as RateLimitExceeded:
            apiError = APIError(error)
        case let error as ImageError:
            apiError = APIError(error)
        case let error as MediaStoreError:
            logger.warning("media store failed", metadata: ["request_id": "\(requestID)", "error": "\(error)"])
            apiError = APIError(error)
        case let error as WeatherError:
            apiError = APIError(error)
        case let error as HTTPError:
            apiError = Self.translate(error)
        case is NIOTooManyBytesError:
            // A chunked body (no Content-Length to refuse up front) ran past the context's `maxUploadSize` while collected.
            apiError = .bodyTooLarge
        case let error as PostgresError where error.isNULInText:
            // Input checks (`InputText`) should have refused it first; the data layer refused it anyway.
            logger.warning("NUL reached the data layer", metadata: ["request_id": "\(requestID)", "path": "\(request.uri.path)"])
            apiError = .badRequest("text must not contain a NUL character (U+0000)")
        case is CancellationError:
            // The server stopped the request (it is shutting down): not the client's fault, and not a bug.
            logger.notice("request cancelled", metadata: ["request_id": "\(requestID)", "path": "\(request.uri.path)"])
            apiError = .cancelled
        case let error as PostgresError where error.isUnavailable:
            logger.warning("database unavailable", metadata: ["request_id": "\(requestID)", "error": "\(error)"])
            apiError = .databaseUnavailable
        default:
            logger.error(
                "unexpected error",
                metadata: ["request_id": "\(requestID)", "method": "\(request.method.rawValue)", "path": "\(request.uri.path)", "error": "\(String(reflecting: error))"]
            )
            apiError = .internalError
        }
        return Self.response(for: apiError)
    }

    static func response(for error: APIError) -> Response {
        let body = ErrorResponse(code: error.code, message: error.message)
        let data = (try? JSONCoding.encoder.encode(body)) ?? Data(#"{"error":{"code":"internal_error","message":"encoding failed"}}"#.utf8)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let retryAfter = error.retryAfter {
            headers[.retryAfter] = String(retryAfter)
        }
        if error.status == .unauthorized {
            headers[.wwwAuthenticate] = "Bearer"
        }
        return Response(status: error.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func translate(_ error: HTTPError) -> APIError {
        let message = error.body
        switch error.status {
        case .notFound: return APIError(.notFound, "not_found", "no such endpoint")
        case .methodNotAllowed: return APIError(.methodNotAllowed, "method_not_allowed", "this endpoint does not support that method")
        case .contentTooLarge: return .bodyTooLarge
        case .badRequest: return .badRequest(message ?? "malformed request")
        case .unsupportedMediaType: return APIError(.unsupportedMediaType, "unsupported_media_type", message ?? "send application/json")
        case .unauthorized: return .unauthenticated
        default:
            return APIError(error.status, error.status.reasonPhrase.lowercased().replacingOccurrences(of: " ", with: "_"), message ?? error.status.reasonPhrase)
        }
    }

    /// A client id is echoed when it is short printable ASCII; anything else is replaced.
    static func requestID(from header: String?) -> String {
        if let header, !header.isEmpty, header.utf8.count <= 128,
            header.utf8.allSatisfy({ $0 > 32 && $0 < 127 })
        {
            return header
        }
        var random = SystemRandomNumberGenerator()
        let value = random.next() as UInt64
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

extension HTTPField.Name {
    static let requestID = HTTPField.Name("X-Request-Id")!
}
