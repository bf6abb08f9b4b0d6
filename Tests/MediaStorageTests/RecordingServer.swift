import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A loopback HTTP server that records every request and answers with a canned reply (or not at all).
final class RecordingServer: Sendable {
    struct Request: Sendable {
        var method: String
        var uri: String
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    struct Reply: Sendable {
        var status: Int = 200
        var body: [UInt8] = []
        /// Read the request, never answer (a hung server).
        var silent = false
    }

    private let state: Mutex<(requests: [Request], reply: Reply)>
    private let accepted = Mutex(0)
    private let channel: Mutex<(any Channel)?> = Mutex(nil)

    private init(reply: Reply) {
        state = Mutex((requests: [], reply: reply))
    }

    var requests: [Request] { state.withLock { $0.requests } }

    /// TCP connections accepted so far.
    var connectionCount: Int { accepted.withLock { $0 } }

    func setReply(_ reply: Reply) { state.withLock { $0.reply = reply } }

    fileprivate func record(_ request: Request) -> Reply {
        state.withLock {
            $0.requests.append(request)
            return $0.reply
        }
    }

    /// Starts a server on 127.0.0.1 and a free port, runs `body` with it and the port, and stops it.
    @discardableResult
    static func with<T>(reply: Reply = Reply(), _ body: (RecordingServer, Int) async throws -> T) async throws -> T {
        let server = RecordingServer(reply: reply)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                server.accepted.withLock { $0 += 1 }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(RecordingHandler(server: server))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = channel.localAddress?.port ?? 0
        do {
            let result = try await body(server, port)
            try? await channel.close()
            return result
        } catch {
            try? await channel.close()
            throw error
        }
    }
}

private final class RecordingHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let server: RecordingServer
    var head: HTTPRequestHead?
    var body: [UInt8] = []

    init(server: RecordingServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(var buffer):
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            let reply = server.record(
                .init(method: head.method.rawValue, uri: head.uri, headers: head.headers.map { ($0.name, $0.value) }, body: body)
            )
            if reply.silent { return }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "\(reply.body.count)")
            headers.add(name: "Content-Type", value: "application/xml")
            let responseHead = HTTPResponseHead(version: head.version, status: .init(statusCode: reply.status), headers: headers)
            context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
            if head.method != .HEAD, !reply.body.isEmpty {
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: reply.body)))), promise: nil)
            }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
