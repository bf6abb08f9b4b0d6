import NIOCore
import NIOPosix
import Synchronization

/// A loopback TCP server that accepts connections, reads what is sent and never answers: an object store that
/// hangs. `waitForConnections` waits on accepted connections without polling; `droppedConnections` counts
/// connections the client gave up on (a request that timed out).
final class StalledServer: Sendable {
    private final class State: Sendable {
        let connections = Mutex<[any Channel]>([])
        let dropped = Mutex(0)
        let closing = Mutex(false)
    }

    let port: Int
    private let accepted: AsyncStream<Void>
    private let server: any Channel
    private let state: State

    private init(port: Int, accepted: AsyncStream<Void>, server: any Channel, state: State) {
        self.port = port
        self.accepted = accepted
        self.server = server
        self.state = state
    }

    static func start() async throws -> StalledServer {
        let (accepted, continuation) = AsyncStream<Void>.makeStream()
        let state = State()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                state.connections.withLock { $0.append(child) }
                child.closeFuture.whenComplete { _ in
                    if !state.closing.withLock({ $0 }) { state.dropped.withLock { $0 += 1 } }
                }
                continuation.yield()
                return child.eventLoop.makeSucceededVoidFuture()  // no handler: what arrives is dropped unanswered
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return StalledServer(port: channel.localAddress?.port ?? 0, accepted: accepted, server: channel, state: state)
    }

    /// Waits until `count` connections (in all) were accepted: true then, false if fewer came within `limit` (the
    /// requests meant to connect failed before they did; a bound against hanging, not a measure).
    func waitForConnections(_ count: Int, limit: Duration = .seconds(120)) async -> Bool {
        let accepted = self.accepted
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var seen = 0
                for await _ in accepted {
                    seen += 1
                    if seen >= count { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// Connections closed by the client so far.
    var droppedConnections: Int { state.dropped.withLock { $0 } }

    /// Closes every connection and stops listening: the stalled requests fail at once, new ones are refused.
    func close() async {
        state.closing.withLock { $0 = true }
        try? await server.close()
        for connection in state.connections.withLock({ $0 }) { try? await connection.close() }
    }
}
