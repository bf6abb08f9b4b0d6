import Foundation
import Logging
import NIOCore
import NIOHTTP1
import WeatherboardAPI

/// The deadlines of one connection while the server reads a request (`ConnectionDeadlines`), and its lingering
/// close. It sits first in the pipeline, on the raw bytes, so it knows when any byte came; `RequestPartsWatcher`,
/// after the HTTP decoder, tells it where requests begin and end and when answers end.
///
/// - **Header**: from the opening (or, kept alive, from a request's first byte) to the end of the head. Past it, a
///   connection that sent nothing is closed; one that sent part of a head is answered 408 and closed.
/// - **Keep-alive**: between an answer and the next request's first byte. Past it the connection is closed.
/// - **Body**: the wait on the client between two reads of a body, and (but for uploads) the whole body from its
///   head. Past either, the body the handler reads ends in `RequestBodyTimeout`, which is answered 408; then the
///   connection is closed.
/// - **Target**: on a connection's first request, a request target past the bound is answered 414 as its bytes
///   arrive (`RequestTargetScanner`); the router answers a later request's, and this guard one the decoder refused.
/// - **Unreadable heads**: a head the decoder refuses is answered 400 (or 414) in the contract's shape.
/// - **Lingering close**: a close asked for in the middle of a request (an early answer, a deadline), or after an
///   answer with `Connection: close`, first ends the output, then reads and discards what the client still sends
///   (at most `lingerTime`, and `lingerGap` of silence), then closes: a client that writes its whole body before it
///   reads still reads the answer, where closing at once would reset the connection under it.
///
/// - **Streams**: once a connection carries a live stream (`markStreaming`), the end of the client's input closes it.
///
/// Nothing times an answer: while one is written no deadline runs, so a live stream lasts as long as it is read.
/// All of it runs on the connection's event loop; the deadlines share one scheduled task, moved only when a nearer
/// deadline is set.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    // Written bytes pass through untouched.
    typealias OutboundIn = Any
    typealias OutboundOut = Any

    /// Why a deadline ended a request or a connection: `http_connection_deadlines_total{reason}`.
    enum Expiry: String, Sendable {
        /// Part of a head came, not all of it: 408.
        case header
        /// Nothing came: closed.
        case headerSilent = "header_silent"
        case keepAlive = "keepalive"
        case bodyStalled = "body_stalled"
        case bodyDeadline = "body_deadline"
        case targetTooLong = "target_too_long"
        /// A head the HTTP decoder could not read (not HTTP/1.1, or past its 80 KiB bound): 400.
        case malformed
    }

    private let deadlines: ConnectionDeadlines
    private let record: @Sendable (Expiry) -> Void
    private let ledger: ConnectionLedger
    private let logger: Logger
    private var context: ChannelHandlerContext?
    /// Raises a body's timeout into the request parts the handler reads.
    private var raiseInBody: ((RequestBodyTimeout) -> Void)?

    private var started = false
    /// Request heads and ends read, answers ended (pipelined requests are answered in order).
    private var heads = 0
    private var ends = 0
    private var answered = 0
    /// Bytes come since the last request's end that the decoder has not made a head of yet.
    private var pendingBytes = 0
    private var scanner: RequestTargetScanner?
    /// Whether the scanner's verdict answers the request (a connection's first request, whose first byte is surely
    /// its line's first), or only names a head the decoder refused (a kept-alive request: its bytes may begin inside
    /// a read that also carried the previous request's end).
    private var scannerAnswers = true
    /// The scanner found the current request's target past the bound without answering it.
    private var targetTooLong = false

    private var headerDeadline: NIODeadline?
    private var keepAliveDeadline: NIODeadline?
    private var bodyGapDeadline: NIODeadline?
    private var bodyDeadline: NIODeadline?
    /// A head was read whose body's clocks are not started yet (they start once the read that carried the head is
    /// done and the request is still unfinished: a request whose end came with its head costs no clock at all).
    private var bodyClocksPending = false
    private var wholeBodyBounded = true
    private var lingerDeadline: NIODeadline?
    private var lingerGapDeadline: NIODeadline?
    private var timer: Scheduled<Void>?
    private var timerFiresAt: NIODeadline?

    /// While set, what comes is read and dropped, not passed on: the request it belongs to was answered or timed out.
    private var discarding = false
    private var lingering = false
    private var closed = false
    /// The connection carries a live stream (`markStreaming`); the client's end of input then ends it at once.
    private var streaming = false
    private var inputEnded = false
    private var closePromises: [EventLoopPromise<Void>] = []

    init(deadlines: ConnectionDeadlines, ledger: ConnectionLedger, logger: Logger, record: @escaping @Sendable (Expiry) -> Void) {
        self.deadlines = deadlines
        self.ledger = ledger
        self.logger = logger
        self.record = record
        self.scanner = RequestTargetScanner(limit: deadlines.maxTargetBytes)
    }

    // MARK: Pipeline events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if started { ledger.closed() }
        closed = true
        timer?.cancel()
        timer = nil
        let promises = closePromises
        closePromises = []
        for promise in promises { promise.succeed() }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if discarding {
            if lingering { lingerGapDeadline = .now() + deadlines.lingerGap }
            return
        }
        let buffer = unwrapInboundIn(data)
        if heads == ends {
            // Bytes of a request not begun. On a kept-alive connection its head's time starts with its first byte
            // (while an answer is still written, with that answer's end).
            if pendingBytes == 0, answered == heads, headerDeadline == nil {
                keepAliveDeadline = nil
                setHeaderDeadline()
                scanner = RequestTargetScanner(limit: deadlines.maxTargetBytes)
                scannerAnswers = false
            }
            pendingBytes += buffer.readableBytes
            if var scanner {
                switch scanner.scan(buffer) {
                case .more:
                    self.scanner = scanner
                case .done:
                    self.scanner = nil
                case .tooLong:
                    self.scanner = nil
                    if scannerAnswers {
                        answer(.targetTooLong, status: "414 URI Too Long", code: "uri_too_long", message: Self.targetTooLongMessage(deadlines))
                        return
                    }
                    targetTooLong = true
                }
            }
        }
        // The client sent: the wait on it between reads ends.
        bodyGapDeadline = nil
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if bodyClocksPending { startBodyClocks() }
        // What is discarded is read here, whatever the handlers downstream ask for: they read no more of it.
        if discarding { context.read() }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(.inputClosed) = event as? ChannelEvent {
            inputEnded = true
            // Lingering: the client has read the answer and closed its side, nothing is left to wait for. Streaming:
            // the client hung up (see `markStreaming`).
            if lingering || streaming { return closeNow() }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        switch mode {
        case .all:
            if closed {
                context.close(mode: .all, promise: promise)
            } else if lingering {
                if let promise { closePromises.append(promise) }
            } else if discarding || heads > ends || pendingBytes > 0 {
                if let promise { closePromises.append(promise) }
                linger()
            } else {
                context.close(mode: .all, promise: promise)
            }
        case .output:
            // The answer is whole and the connection ends (`Connection: close`): wait for the client to close its
            // side, not forever.
            context.close(mode: .output, promise: promise)
            if !lingering, !closed { startLingerClock() }
        case .input:
            context.close(mode: mode, promise: promise)
        }
    }

    // MARK: Streams

    /// Marks `channel`'s connection as carrying a live stream. The server allows half-closed connections (a client
    /// may send its request, shut down its side and still read the answer), so a client that closes cleanly shows
    /// only as the end of its input: a stream would learn of it at its next write, up to a heartbeat later, holding a
    /// slot of `STREAM_MAX_PER_CLIENT` meanwhile. Once a connection carries a stream, the end of its input closes it
    /// (which ends the stream at once); other requests keep the half-close behaviour.
    static func markStreaming(_ channel: any Channel) {
        channel.eventLoop.execute {
            (try? channel.pipeline.syncOperations.handler(type: ConnectionGuard.self))?.startStreaming()
        }
    }

    private func startStreaming() {
        streaming = true
        if inputEnded { closeNow() }
    }

    // MARK: What the request parts say (from `RequestPartsWatcher`)

    func attach(raiseInBody: @escaping (RequestBodyTimeout) -> Void) {
        self.raiseInBody = raiseInBody
    }

    /// A request head was read; `wholeBodyBounded` is false for an upload, whose handler bounds its whole body.
    func requestHead(wholeBodyBounded: Bool) {
        heads += 1
        pendingBytes = 0
        headerDeadline = nil
        scanner = nil
        targetTooLong = false
        bodyClocksPending = true
        self.wholeBodyBounded = wholeBodyBounded
    }

    func requestEnd() {
        ends += 1
        bodyClocksPending = false
        bodyGapDeadline = nil
        bodyDeadline = nil
    }

    /// The read that carried a head is done and its request goes on: its body's clocks start.
    private func startBodyClocks() {
        bodyClocksPending = false
        guard heads > ends, !discarding else { return }
        let now = NIODeadline.now()
        if bodyGapDeadline == nil { bodyGapDeadline = now + deadlines.bodyGap }
        bodyDeadline = wholeBodyBounded ? now + deadlines.bodyDeadline : nil
        schedule()
    }

    /// The HTTP decoder could not read a head. With no answer in flight, it is answered here in the contract's shape
    /// (414 when the target was seen past its bound, else 400), and true is returned: the error goes no further.
    /// With one in flight (a pipelined request), false: Hummingbird answers it after.
    func headUnreadable(_ error: HTTPParserError) -> Bool {
        guard answered == heads, heads == ends, !discarding, !closed else { return false }
        if error == .headerOverflow, targetTooLong {
            answer(.targetTooLong, status: "414 URI Too Long", code: "uri_too_long", message: Self.targetTooLongMessage(deadlines))
        } else if error == .headerOverflow {
            answer(.malformed, status: "400 Bad Request", code: "bad_request", message: "the request head is larger than the server reads")
        } else {
            answer(.malformed, status: "400 Bad Request", code: "bad_request", message: "the request is not valid HTTP/1.1")
        }
        return true
    }

    static func targetTooLongMessage(_ deadlines: ConnectionDeadlines) -> String {
        "the request target is longer than \(deadlines.maxTargetBytes) bytes"
    }

    /// The server asked for more input (not held back because what it has is not read yet): if it is in the middle
    /// of a body, from now it waits on the client.
    func serverWantsInput() {
        guard heads > ends, !discarding, bodyGapDeadline == nil else { return }
        bodyGapDeadline = .now() + deadlines.bodyGap
        schedule()
    }

    func answerEnded() {
        answered += 1
        guard answered == heads, heads == ends, !discarding else { return }
        if pendingBytes > 0 {
            setHeaderDeadline()
        } else {
            keepAliveDeadline = .now() + deadlines.keepAlive
            schedule()
        }
    }

    // MARK: Deadlines

    private func start() {
        guard !started else { return }
        started = true
        ledger.opened()
        setHeaderDeadline()
    }

    private func setHeaderDeadline() {
        headerDeadline = .now() + deadlines.header
        schedule()
    }

    /// Moves the one scheduled task to the nearest deadline if it would fire later (or not at all); a deadline that
    /// moved away is found not due when the task fires, which then moves on.
    private func schedule() {
        guard !closed, let context else { return }
        var nearest: NIODeadline?
        func consider(_ deadline: NIODeadline?) {
            if let deadline, nearest.map({ deadline < $0 }) ?? true { nearest = deadline }
        }
        consider(headerDeadline)
        consider(keepAliveDeadline)
        consider(bodyGapDeadline)
        consider(bodyDeadline)
        consider(lingerDeadline)
        consider(lingerGapDeadline)
        guard let next = nearest else { return }
        if let timerFiresAt, timer != nil, timerFiresAt <= next { return }
        timer?.cancel()
        timerFiresAt = next
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: next) { [self] in
            timer = nil
            timerFiresAt = nil
            expire()
        }
    }

    private func expire() {
        guard !closed else { return }
        let now = NIODeadline.now()
        if let deadline = lingerDeadline, deadline <= now {
            return closeNow()
        }
        if let deadline = lingerGapDeadline, deadline <= now {
            return closeNow()
        }
        if let deadline = headerDeadline, deadline <= now {
            headerDeadline = nil
            if pendingBytes > 0 {
                answer(.header, status: "408 Request Timeout", code: "request_timeout", message: "the request head did not arrive whole within \(deadlines.header.nanoseconds / 1_000_000_000) s")
            } else {
                end(.headerSilent)
            }
            return
        }
        if let deadline = keepAliveDeadline, deadline <= now {
            keepAliveDeadline = nil
            return end(.keepAlive)
        }
        if let deadline = bodyDeadline, deadline <= now {
            return endBody(.bodyDeadline, RequestBodyTimeout(kind: .deadline, seconds: deadlines.bodyDeadline.nanoseconds / 1_000_000_000))
        }
        if let deadline = bodyGapDeadline, deadline <= now {
            return endBody(.bodyStalled, RequestBodyTimeout(kind: .stalled, seconds: deadlines.bodyGap.nanoseconds / 1_000_000_000))
        }
        schedule()
    }

    /// A silent connection: closed, nothing to answer.
    private func end(_ expiry: Expiry) {
        record(expiry)
        logger.debug("connection closed", metadata: ["reason": "\(expiry.rawValue)", "peer": "\(context?.channel.remoteAddress?.description ?? "-")"])
        closeNow()
    }

    /// A body that stopped: the handler reading it gets `RequestBodyTimeout` (answered 408 by the router's error
    /// mapping); what the client still sends is discarded, and the connection lingers once the answer is out.
    private func endBody(_ expiry: Expiry, _ error: RequestBodyTimeout) {
        bodyGapDeadline = nil
        bodyDeadline = nil
        discarding = true
        context?.read()
        record(expiry)
        guard let raiseInBody else { return linger() }
        raiseInBody(error)
    }

    /// Answers a request the router never saw (its head is not whole, or too long to read), then lingers.
    private func answer(_ expiry: Expiry, status: String, code: String, message: String) {
        guard let context else { return }
        record(expiry)
        discarding = true
        let requestID = RequestEnvelopeMiddleware.requestID(from: nil)
        logger.info("request", metadata: ["status": "\(status.prefix(3))", "reason": "\(expiry.rawValue)", "request_id": "\(requestID)"])
        let body = (try? JSONCoding.encoder.encode(ErrorResponse(code: code, message: message))) ?? Data()
        var buffer = context.channel.allocator.buffer(capacity: body.count + 200)
        buffer.writeString(
            "HTTP/1.1 \(status)\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\n"
                + "Connection: close\r\nX-Request-Id: \(requestID)\r\n\r\n"
        )
        buffer.writeBytes(body)
        context.writeAndFlush(NIOAny(buffer), promise: nil)
        linger()
    }

    /// Ends the output once what was written is out, then reads and discards until the client closes, is silent for
    /// `lingerGap`, or `lingerTime` passed.
    private func linger() {
        guard let context, !lingering, !closed else { return }
        discarding = true
        context.flush()
        context.close(mode: .output, promise: nil)
        startLingerClock()
    }

    private func startLingerClock() {
        lingering = true
        discarding = true
        context?.read()
        headerDeadline = nil
        keepAliveDeadline = nil
        bodyGapDeadline = nil
        bodyDeadline = nil
        let now = NIODeadline.now()
        lingerDeadline = now + deadlines.lingerTime
        lingerGapDeadline = now + deadlines.lingerGap
        schedule()
    }

    private func closeNow() {
        guard let context, !closed else { return }
        closed = true
        timer?.cancel()
        timer = nil
        context.close(mode: .all, promise: nil)
    }
}

@available(*, unavailable)
extension ConnectionGuard: Sendable {}
