import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// Gives the memory of closed connections back to the system. glibc's malloc keeps what a connection freed in its
/// arenas for reuse, so after a flood of connections (a slowloris ended by the header deadline, streams that left)
/// the process would stay at its peak. Every `interval`, when at least `closedThreshold` connections closed since
/// the last look, `malloc_trim(0)` returns the free pages (off Swift's pool: it walks every arena). Also keeps
/// `http_connections_open` current.
struct MemoryTrimService: Service {
    let ledger: ConnectionLedger
    let metrics: AppMetrics
    let logger: Logger
    var interval: Duration = .seconds(5)
    var closedThreshold = 256

    /// glibc's `malloc_trim`, looked up at run time (not declared by Swift's Glibc module; absent elsewhere).
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    func run() async throws {
        let lastTrimmed = LastSeen()
        await repeatUntilShutdown(every: interval) {
            metrics.setGauge("http_connections_open", to: Double(ledger.open))
            let closed = ledger.closedSoFar
            guard closed - lastTrimmed.count.withLock({ $0 }) >= closedThreshold, let trim = Self.mallocTrim else { return }
            lastTrimmed.count.withLock { $0 = closed }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global(qos: .utility).async {
                    _ = trim(0)
                    continuation.resume()
                }
            }
            logger.debug("memory trimmed", metadata: ["connections_closed": "\(closed)"])
        }
    }

    /// The closed count at the last trim.
    private final class LastSeen: Sendable {
        let count = Mutex(0)
    }
}
