import Foundation
import Logging
import Synchronization

/// One dedicated session that `LISTEN`s on a channel, on a thread of its own (libpq blocks; Swift's cooperative pool
/// never waits on it): it waits for the socket (`poll`), reads what arrived (`PQconsumeInput`) and drains the
/// notifications (`PQnotifies`), then calls `onWake`. It never runs other statements, so it needs no pool connection.
///
/// A notification sent while no session listened is gone for good. So after every (re)`LISTEN` the listener calls
/// `onWake(.listening)`: its owner must read what it may have missed from a table, not from notifications. A lost
/// connection (a restart, `pg_terminate_backend`, a failover) is replaced with a growing back-off (0.1 s doubling to
/// 5 s), each replacement counted in `reconnects`.
public final class PostgresListener: Sendable {
    public enum Wake: Sendable {
        /// A (new) session listens: whatever was notified before may have been missed.
        case listening
        /// At least one notification arrived.
        case notified
    }

    private struct State {
        var stopped = false
        var thread: PoolThread?
        var reconnects = 0
    }

    private let conninfo: String
    private let channel: String
    private let connectTimeoutSeconds: Int
    private let onWake: @Sendable (Wake) -> Void
    private let logger: Logger
    private let state = Mutex(State())

    /// `channel` is an SQL identifier the caller chose (never outside input): letters, digits and `_` only.
    public init(conninfo: String, channel: String, connectTimeoutSeconds: Int = 3, logger: Logger, onWake: @escaping @Sendable (Wake) -> Void) {
        precondition(!channel.isEmpty && channel.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) })
        self.conninfo = conninfo
        self.channel = channel
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.onWake = onWake
        self.logger = logger
    }

    /// Replacements of a lost session since `start()`.
    public var reconnects: Int { state.withLock { $0.reconnects } }

    public func start() {
        state.withLock { state in
            guard state.thread == nil, !state.stopped else { return }
            state.thread = PoolThread.start(name: "pg-listener") { [self] in run() }
        }
    }

    /// Ends the session and its thread (within a quarter of a second plus any connect in progress).
    public func stop() {
        let thread: PoolThread? = state.withLock { state in
            state.stopped = true
            defer { state.thread = nil }
            return state.thread
        }
        thread?.join()
    }

    private var stopped: Bool { state.withLock { $0.stopped } }

    private func run() {
        var backoff = 100
        var connectedBefore = false
        while !stopped {
            do {
                let connection = try PostgresConnection(
                    conninfo: conninfo, statementTimeoutMilliseconds: 5000, connectTimeoutSeconds: connectTimeoutSeconds,
                    applicationName: "weatherboard-listener"
                )
                try connection.simpleQuery("LISTEN \(channel)")
                if connectedBefore {
                    state.withLock { $0.reconnects += 1 }
                    logger.info("stream listener reconnected")
                }
                connectedBefore = true
                backoff = 100
                onWake(.listening)
                while !stopped {
                    if try connection.waitForNotifications(timeoutMilliseconds: 250) > 0 { onWake(.notified) }
                }
                connection.close()
            } catch {
                logger.warning("stream listener lost its session", metadata: ["error": "\(error)", "retry_ms": "\(backoff)"])
                var waited = 0
                while waited < backoff && !stopped {
                    usleep(50_000)
                    waited += 50
                }
                backoff = min(backoff * 2, 5000)
            }
        }
    }
}
