// The ceiling of the HTTP stack on this machine, without weatherboard: the same `/healthz` body served by
// (a) a bare SwiftNIO HTTP/1 pipeline answering from a ChannelHandler on the event loop, and
// (b) a bare Hummingbird 2 application with one route and no middleware.
// `EL=1` also installs NIO's event loops as Swift concurrency's global executor (an experiment; see
// bench/README.md). Run through bench/baseline/run.
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOPosix

let mode = CommandLine.arguments.dropFirst().first ?? "hummingbird"
let port = Int(ProcessInfo.processInfo.environment["BASELINE_PORT"] ?? "18095") ?? 18095
if ProcessInfo.processInfo.environment["EL"] != nil {
    NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
}

final class HealthHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: "15")
        headers.add(name: "Content-Type", value: "application/json")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "{\"status\":\"ok\"}")))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

if mode == "nio" {
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(HealthHandler())
            }
        }
        .bind(host: "127.0.0.1", port: port).get()
    try await channel.closeFuture.get()
} else {
    let router = Router()
    router.get("healthz") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: "{\"status\":\"ok\"}")))
    }
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
    try await app.runService()
}
