import Metrics

extension AppMetrics {
    /// A connection deadline that ended a request or a connection (`ConnectionGuard`):
    /// `http_connection_deadlines_total{reason}`, reason one of `header` (408), `header_silent` (closed, nothing
    /// came), `keepalive`, `body_stalled` (408), `body_deadline` (408), `target_too_long` (414), `malformed` (400: a
    /// head the decoder could not read).
    @Sendable func recordConnectionDeadline(_ expiry: ConnectionGuard.Expiry) {
        Counter(label: "http_connection_deadlines_total", dimensions: [("reason", expiry.rawValue)], factory: factory).increment()
    }
}
