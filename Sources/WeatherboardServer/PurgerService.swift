import Board
import Logging
import ServiceLifecycle

/// Runs the purger every `interval` for the life of the server; stops at graceful shutdown.
struct PurgerService: Service {
    let purger: Purger
    /// The media part of a pass (unattached media after 24 h, retired media no report names); nil without media.
    let media: MediaService?
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
            var pass = try await purger.runOnce()
            if pass.ran, let media {
                pass.counts.merge(try await media.purge()) { $0 + $1 }
            }
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
