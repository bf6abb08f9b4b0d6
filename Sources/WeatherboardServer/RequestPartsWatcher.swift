import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Tells the connection's `ConnectionGuard` where requests begin and end, when answers end and when the server asks
/// for more input, as the parts pass between the HTTP decoder and the handlers; and raises a body's timeout into the
/// parts the handler reads. Nothing passes changed.
final class RequestPartsWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let connection: ConnectionGuard
    private var context: ChannelHandlerContext?

    init(connection: ConnectionGuard) {
        self.connection = connection
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        connection.attach { [weak self] error in
            self?.context?.fireErrorCaught(error)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            // An upload's whole body has its own bound (its handler's); every other body, this connection's.
            let isUpload = head.method == .post && head.path.map { MediaController.isUpload(method: head.method, path: $0.prefix { $0 != "?" }) } == true
            connection.requestHead(wholeBodyBounded: !isUpload)
        case .body:
            break
        case .end:
            connection.requestEnd()
        }
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A head the decoder refused is answered in the contract's shape where it can be (`headUnreadable`).
        if let parseError = error as? HTTPParserError, connection.headUnreadable(parseError) { return }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let isEnd = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if isEnd { connection.answerEnded() }
    }

    func read(context: ChannelHandlerContext) {
        connection.serverWantsInput()
        context.read()
    }
}

@available(*, unavailable)
extension RequestPartsWatcher: Sendable {}
