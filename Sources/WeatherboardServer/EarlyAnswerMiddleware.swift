import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// Makes an early answer (one sent before the request's body was read to its end: 413, 401, 403, 415, 429, 408…)
/// readable by a client that writes its whole body before it reads, as nginx's lingering close does.
///
/// Hummingbird 2.28 writes the answer, then reads what is left of the body before the next request on the
/// connection, with no bound; and when a handler stopped in the middle of reading (a 413 on a chunked body, a
/// cancelled read), what is left can be held behind back-pressure while nobody reads. Here, when the handler
/// returns with more than `keptAliveBodyBytes` of body unread, the answer says `Connection: close`, is written
/// whole, and then the connection is closed: `ConnectionGuard` ends its output and reads and discards what the
/// client still sends, for a bounded time, before it closes it.
struct EarlyAnswerMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    /// An unread body declared this large or smaller stays on a kept-alive connection: Hummingbird reads it after the
    /// answer (it fits in the socket buffers, so the client's write never blocks).
    static let keptAliveBodyBytes = AppRequestContext.maxBodyBytes

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        let chunked = request.headers[.transferEncoding] != nil
        // No body at all (most requests): nothing to track.
        guard chunked || (declared ?? 0) > 0 else { return try await next(request, context) }
        let cursor = BodyCursor(request.body)
        var request = request
        request.body = RequestBody(asyncSequence: cursor)
        var response = try await next(request, context)
        guard !cursor.finished, chunked || (declared ?? 0) > Self.keptAliveBodyBytes else { return response }
        response.headers[.connection] = "close"
        let answer = response.body
        let channel = context.channel
        response.body = ResponseBody(contentLength: answer.contentLength) { writer in
            try await answer.write(writer)
            // The rest of the body is discarded by the connection's lingering close (`ConnectionGuard`).
            channel.close(promise: nil)
        }
        return response
    }
}

/// The request body as the handler reads it, through one shared iterator, so that whether the handler read it to its
/// end is known after it returned.
final class BodyCursor: AsyncSequence, @unchecked Sendable {
    typealias Element = ByteBuffer

    private let body: RequestBody
    private var iterator: RequestBody.AsyncIterator?
    private let state = Mutex(false)

    init(_ body: RequestBody) {
        self.body = body
    }

    /// True once the body's end was read.
    var finished: Bool { state.withLock { $0 } }

    func next() async throws -> ByteBuffer? {
        var current = iterator ?? body.makeAsyncIterator()
        let chunk = try await current.next()
        iterator = current
        // A read that ended because its task was cancelled (an upload's time limit) is not the body's end.
        if chunk == nil, !Task.isCancelled { state.withLock { $0 = true } }
        return chunk
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let cursor: BodyCursor
        mutating func next() async throws -> ByteBuffer? { try await cursor.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(cursor: self) }
}
