import Synchronization

/// Connections opened and closed by this process (`ConnectionGuard` counts them): `http_connections_open`, and what
/// tells `MemoryTrimService` that many closed since it last looked.
final class ConnectionLedger: Sendable {
    private let counts = Mutex((opened: 0, closed: 0))

    func opened() { counts.withLock { $0.opened += 1 } }
    func closed() { counts.withLock { $0.closed += 1 } }

    var open: Int { counts.withLock { $0.opened - $0.closed } }
    var closedSoFar: Int { counts.withLock { $0.closed } }
}
