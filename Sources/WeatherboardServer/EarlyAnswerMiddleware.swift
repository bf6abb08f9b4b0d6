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
/// whole, and then the rest of the body is read and discarded: at most `lingerMaxBytes`, for at most
/// `lingerMaxTime`. Then the connection closes.
struct EarlyAnswerMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    /// An unread body declared this large or smaller stays on a kept-alive connection: Hummingbird reads it after the
    /// answer (it fits in the socket buffers, so the client's write never blocks).
    static let keptAliveBodyBytes = AppRequestContext.maxBodyBytes
    /// Discarded after an early answer at most; past it the connection is closed with the rest unread.
    static let lingerMaxBytes = 64 * 1024 * 1024
    /// How long the rest of a body is read and discarded at most, however slowly it comes; then the connection closes.
    static let lingerMaxTime = TimeAmount.seconds(10)

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
            await cursor.discardRest(maxBytes: Self.lingerMaxBytes, maxTime: Self.lingerMaxTime, channel: channel)
        }
        return response
    }
}

/// The request body as the handler reads it, through one shared iterator, so that what the handler left unread can
/// be read (and discarded) after it returned. One task reads at a time: the handler, then the answer's writer.
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

    /// Reads and drops the rest of the body, at most `maxBytes` and for at most `maxTime`. When its end was read,
    /// the connection's input is closed at that message boundary, so Hummingbird stops reading and closes the
    /// connection once the answer is out. When a bound was hit first, the connection is closed as it stands (the
    /// client has had the answer all the while; closing only the input mid-body would make the HTTP decoder answer
    /// a second time, with a 400).
    func discardRest(maxBytes: Int, maxTime: TimeAmount, channel: any Channel) async {
        let timer = channel.eventLoop.scheduleTask(in: maxTime) { channel.close(promise: nil) }
        var discarded = 0
        do {
            while discarded <= maxBytes, let chunk = try await next() { discarded += chunk.readableBytes }
        } catch {
            // The client went away or the connection was closed: nothing left to discard.
        }
        timer.cancel()
        if finished {
            channel.close(mode: .input, promise: nil)
        } else {
            channel.close(promise: nil)
        }
    }
}
