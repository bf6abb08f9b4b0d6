import Board
import Metrics

extension AppMetrics {
    /// One notification's end or retry (CONTRACT §14): `push_sent_total{kind,result}`, and for a delivery
    /// `push_delivery_seconds` from queued to APNs's 200.
    @Sendable public func recordPush(_ kind: PushQueue.Kind, result: String, delivered: Double?) {
        Counter(label: "push_sent_total", dimensions: [("kind", kind.rawValue), ("result", result)], factory: factory).increment()
        if let delivered {
            Timer(label: "push_delivery_seconds", factory: factory).recordNanoseconds(Int64(max(0, delivered) * 1e9))
        }
    }

    /// `push_queue_depth`: notifications not yet answered.
    @Sendable public func recordPushQueueDepth(_ depth: Int) {
        setGauge("push_queue_depth", to: Double(depth))
    }

    /// `push_provider_tokens_made`, `push_connections_opened`: the sender's own counts.
    func recordPushSender(tokensMade: Int, connections: Int) {
        setGauge("push_provider_tokens_made", to: Double(tokensMade))
        setGauge("push_connections_opened", to: Double(connections))
    }
}
