import NIOCore

/// A stream's connection, written directly (CONTRACT §11): the hub writes each message here on the connection's event
/// loop, already framed as an HTTP/1.1 chunk (`StreamHub.chunk`, once for every stream it goes to), below the HTTP
/// codec, so a delivery is a buffer appended and a flush, with no task woken and no codec run.
///
/// It sits first in the pipeline from before the response head is written: it sees the head go by and is used only if
/// the body is chunked (HTTP/1.1); otherwise the stream stays on its response task's writes. Everything else passes
/// through untouched. Its state is touched only on its event loop (hence `@unchecked Sendable`).
final class StreamConnection: ChannelOutboundHandler, RemovableChannelHandler, @unchecked Sendable {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    let eventLoop: any EventLoop
    private var context: ChannelHandlerContext?
    private var sawHead = false
    private var chunked = false
    private var ended = false
    /// Messages written in a row while the connection was not writable (past its outbound high-water mark).
    private var unwritable = 0

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Puts a connection first in `channel`'s pipeline (before the response head is written).
    static func install(on channel: any Channel) -> StreamConnection {
        let connection = StreamConnection(eventLoop: channel.eventLoop)
        channel.eventLoop.execute {
            try? channel.pipeline.syncOperations.addHandler(connection, position: .first)
        }
        return connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if !sawHead, case .byteBuffer(let head) = unwrapOutboundIn(data) {
            sawHead = true
            chunked = head.getString(at: head.readerIndex, length: head.readableBytes)?.lowercased().contains("\r\ntransfer-encoding: chunked\r\n") ?? false
        }
        context.write(data, promise: promise)
    }

    /// Whether the hub may write here (on the event loop, after the head): installed, the body chunked, not ended.
    func ready() async -> Bool {
        (try? await eventLoop.submit { self.context != nil && self.chunked && !self.ended }.get()) ?? false
    }

    /// Writes a framed message (on the event loop); false once `limit` messages were written in a row while the
    /// connection was not writable: the client is not reading, and the caller drops it.
    func write(_ chunk: ByteBuffer, limit: Int) -> Bool {
        guard !ended, let context else { return true }
        if context.channel.isWritable {
            unwritable = 0
        } else {
            unwritable += 1
            if unwritable > limit {
                ended = true
                return false
            }
        }
        context.write(wrapOutboundOut(.byteBuffer(chunk)), promise: nil)
        return true
    }

    func flush() {
        guard !ended, let context else { return }
        context.flush()
    }

    /// No more direct writes: after it, the response task writes the end of the body.
    func end() async {
        try? await eventLoop.submit { self.ended = true }.get()
    }
}
