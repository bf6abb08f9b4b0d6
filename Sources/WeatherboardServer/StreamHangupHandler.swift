import Hummingbird
import NIOCore

/// Notices a stream's client hanging up. The server allows half-closed connections (a client may send its request,
/// shut down its side and still read the answer), so a client that closes cleanly shows only as the end of its input:
/// the channel stays open and a stream would learn of it at its next write, up to a heartbeat later, holding a slot of
/// `STREAM_MAX_PER_CLIENT` meanwhile. Once a connection carries a stream (`markStreaming`), the end of its input closes
/// it (which ends the stream at once); other requests keep the half-close behaviour.
final class StreamHangupHandler: ChannelInboundHandler, RemovableChannelHandler {
    // The request parts pass through untouched (never unwrapped), so their type is not named here.
    typealias InboundIn = Any
    typealias InboundOut = Any

    private var streaming = false
    private var inputClosed = false
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .some(.inputClosed) = event as? ChannelEvent {
            inputClosed = true
            if streaming {
                context.close(promise: nil)
                return
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Called on the event loop once the connection carries a stream.
    private func startStreaming() {
        streaming = true
        if inputClosed { context?.close(promise: nil) }
    }

    /// Marks `channel`'s connection as carrying a stream (no-op where the handler is not installed).
    static func markStreaming(_ channel: any Channel) {
        channel.eventLoop.execute {
            (try? channel.pipeline.syncOperations.handler(type: StreamHangupHandler.self))?.startStreaming()
        }
    }
}
