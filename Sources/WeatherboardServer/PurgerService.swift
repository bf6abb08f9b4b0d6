import Board
import Logging
import ServiceLifecycle

/// Runs the purger every `interval` for the life of the server; stops at graceful shutdown.
struct PurgerService: Service {
    let purger: Purger
    let interval: Duration
    let metrics: AppMetrics
    let logger: Logger

    func run() async throws {
        await repeatUntilShutdown(every: interval) { await pass() }
    }

    func pass() async {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let pass = try await purger.runOnce()
            metrics.recordPurge(pass, duration: clock.now - start)
            if pass.ran, pass.counts.values.contains(where: { $0 > 0 }) {
                logger.info("purged expired rows", metadata: pass.counts.reduce(into: [:]) { $0[$1.key] = "\($1.value)" })
            }
        } catch {
            metrics.recordPurge(nil, duration: clock.now - start)
            logger.warning("purge failed", metadata: ["error": "\(error)"])
        }
    }
}
