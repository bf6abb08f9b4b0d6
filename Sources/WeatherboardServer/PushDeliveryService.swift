import Board
import Database
import Logging
import ServiceLifecycle

/// Works the push queue for the life of the server (`PushDelivery`), and keeps `push_queue_depth` current; stops at
/// graceful shutdown. What is claimed and not yet answered then is sent again when its lease ends.
struct PushDeliveryService: Service {
    let delivery: PushDelivery
    let queue: PushQueue
    let database: PostgresPool
    let metrics: AppMetrics

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await delivery.run() }
                group.addTask {
                    while !Task.isCancelled {
                        if let depth = try? await queue.depth(on: database) { metrics.recordPushQueueDepth(depth) }
                        try? await Task.sleep(for: .seconds(5))
                    }
                }
            }
        }
    }
}
