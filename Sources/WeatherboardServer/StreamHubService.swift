import Database
import Dispatch
import Logging
import ServiceLifecycle

/// Runs the stream hub for the life of the server: its listener session, its reader (`StreamHub.pump`) and its
/// heartbeats. At graceful shutdown every stream ends and the listener's session and thread close.
struct StreamHubService: Service {
    let hub: StreamHub
    let conninfo: String
    let heartbeat: Duration
    let logger: Logger

    func run() async throws {
        let hub = self.hub
        let listener = PostgresListener(conninfo: conninfo, channel: "weatherboard_stream", logger: logger, onWake: hub.listenerWoke)
        hub.attach(listener)
        listener.start()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await hub.pump() }
            group.addTask { [heartbeat] in
                while (try? await Task.sleep(for: heartbeat)) != nil { await hub.heartbeat() }
            }
            try? await gracefulShutdown()
            hub.shutdown()
            group.cancelAll()
        }
        // `stop` joins the listener's thread (it notices within a quarter of a second): off Swift's cooperative pool.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                listener.stop()
                hub.pumpDatabase.shutdown()
                continuation.resume()
            }
        }
    }
}
