import Synchronization

/// Counts of data-layer errors, by kind.
final class ErrorCounts: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    func record(_ error: PostgresError) {
        let kind: String
        switch error.kind {
        case .connection: kind = "connection"
        case .poolTimeout: kind = "pool_timeout"
        case .queueFull: kind = "queue_full"
        case .decoding: kind = "decoding"
        case .shutdown: kind = "shutdown"
        case .server: kind = error.isStatementTimeout ? "statement_timeout" : "server"
        }
        counts.withLock { $0[kind, default: 0] += 1 }
    }

    func snapshot() -> [String: Int] {
        counts.withLock { $0 }
    }
}
