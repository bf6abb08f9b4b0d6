import Board
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import Vocabulary

/// CONTRACT §11: the live board and the moderation queue as server-sent events (`StreamHub`).
struct StreamController {
    let hub: StreamHub
    let mediaURLs: MediaURLs

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("stream", use: board)
        routes.get("moderation/stream", use: moderation)
        return routes
    }

    /// The board with the list's filters, as the caller's list shows it.
    @Sendable func board(_ request: Request, context: AppRequestContext) async throws -> Response {
        let input = QueryInput(request)
        let stream = LiveBoardStream(
            reader: Visibility(try await context.checkedViewer()),
            weatherType: try input.value("weatherType", as: WeatherType.self) { $0 != .unknown },
            category: try input.value("category", as: Category.self),
            regionID: try input.id("regionId")
        )
        return try await open(.board(stream), request: request, context: context, links: mediaURLs.links(request, context))
    }

    /// The moderation queue: moderators and admins, not while banned.
    @Sendable func moderation(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await context.requireIdentity().requireModerator()
        return try await open(.moderation, request: request, context: context, links: mediaURLs.links(request, context, moderator: true))
    }

    private func open(_ kind: StreamHub.Board.Kind, request: Request, context: AppRequestContext, links: MediaLinks) async throws -> Response {
        let channel = context.channel
        let (subscriber, start) = try await hub.subscribe(
            kind, client: context.clientIP, language: request.language, links: links, lastEventID: request.headers[HTTPField.Name("Last-Event-ID")!],
            disconnect: { channel.close(promise: nil) }
        )
        let hub = self.hub
        // A client that goes away ends its stream now, not at the next write; and its slot is given back even if the
        // response body never starts.
        channel.closeFuture.whenComplete { _ in hub.unregister(subscriber) }
        ConnectionGuard.markStreaming(channel)
        let connection = StreamConnection.install(on: channel)
        let headers: HTTPFields = [
            .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache", HTTPField.Name("X-Accel-Buffering")!: "no",
        ]
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer { hub.unregister(subscriber) }
                try await withGracefulShutdownHandler {
                    var opening = ByteBuffer(string: "retry: 2000\n")
                    switch start {
                    case .live(let at):
                        opening.writeString("id: \(at)\n\n")
                        try await writer.write(opening)
                    case .reset(let at):
                        opening.writeString("\n")
                        opening.writeImmutableBuffer(hub.board.renderer.render(.reset, id: at, for: nil, links: nil))
                        try await writer.write(opening)
                    case .resume(let after, let through):
                        opening.writeString("\n")
                        try await writer.write(opening)
                        try await hub.replay(subscriber, after: after, through: through) { message in
                            try await writer.write(message)
                            hub.countSent(1)
                        }
                    }
                    // Then direct: the hub writes to the connection itself, and this task waits for the end. (Not
                    // possible on a body that is not chunked: then this task writes what waits.)
                    if await connection.ready(), let handedOver = subscriber.goDirect(connection, frame: StreamHub.chunk) {
                        hub.countSent(handedOver)
                        _ = await subscriber.next()
                    } else {
                        while let messages = await subscriber.next() {
                            // Everything waiting in one write (one chunk, one system call) however many events piled up.
                            if messages.count == 1 {
                                try await writer.write(messages[0])
                            } else {
                                var joined = ByteBuffer()
                                joined.reserveCapacity(messages.reduce(0) { $0 + $1.readableBytes })
                                for message in messages { joined.writeImmutableBuffer(message) }
                                try await writer.write(joined)
                            }
                            hub.countSent(messages.count { $0.readableBytes > 3 })  // not the heartbeats (":\n\n")
                        }
                    }
                    await connection.end()
                } onGracefulShutdown: {
                    hub.shutdown()
                }
                try await writer.finish(nil)
            }
        )
    }
}
