import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1.1 child channel with this server's deadlines: `ConnectionGuard` first in the pipeline, on
/// the raw bytes, and `RequestPartsWatcher` after the decoder; Hummingbird's own idle timer is off (the guard's
/// keep-alive deadline runs between requests only).
struct GuardedHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let responder: HTTPChannelHandler.Responder
    let deadlines: ConnectionDeadlines
    let ledger: ConnectionLedger
    let record: @Sendable (ConnectionGuard.Expiry) -> Void

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let connectionGuard = ConnectionGuard(deadlines: deadlines, ledger: ledger, logger: logger, record: record)
        do {
            try channel.pipeline.syncOperations.addHandler(connectionGuard, position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        let bound = NIOLoopBound(connectionGuard, eventLoop: channel.eventLoop)
        let http1 = HTTP1Channel(
            responder: responder,
            configuration: .init(additionalChannelHandlers: [RequestPartsWatcher(connection: bound.value)], idleTimeout: nil)
        )
        return http1.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 with `ConnectionDeadlines`.
    static func guardedHTTP1(
        deadlines: ConnectionDeadlines, ledger: ConnectionLedger, record: @escaping @Sendable (ConnectionGuard.Expiry) -> Void
    ) -> HTTPServerBuilder {
        .init { responder in
            GuardedHTTP1Channel(responder: responder, deadlines: deadlines, ledger: ledger, record: record)
        }
    }
}
