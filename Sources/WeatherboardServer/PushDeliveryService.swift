import Board
import Push
import Logging
import ServiceLifecycle

/// Works the push queue for the life of the server (`PushDelivery`), and keeps `push_queue_depth` and the sender's
/// counts current; stops at graceful shutdown. What is claimed and not yet answered then is sent again when its lease
/// ends.
struct PushDeliveryService: Service {
    let delivery: PushDelivery
    let sender: any APNsSending
    let metrics: AppMetrics

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await delivery.run() }
                group.addTask {
                    while !Task.isCancelled {
                        await delivery.recordDepth()
                        if let client = sender as? APNsClient {
                            metrics.recordPushSender(tokensMade: client.tokensMade, connections: client.connectionsOpened)
                        }
                        try? await Task.sleep(for: .seconds(5))
                    }
                }
            }
        }
    }
}
