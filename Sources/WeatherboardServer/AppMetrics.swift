import Database
import Foundation
import Synchronization
import Metrics
import NIOCore
import Prometheus
import Weather
import Board

/// The application's metrics, recorded through swift-metrics into this app's own Prometheus registry
/// (so two apps in one process, as in the tests, never mix their numbers), and served at `/metrics`.
public final class AppMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory
    private let counterState = CounterState()

    public init() {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5),
        ]
        self.registry = registry
        self.factory = factory
    }

    /// One finished request: `http_requests_total` and `http_request_duration_seconds`, by route template.
    /// The metric handles are made once per (method, route, status) and reused.
    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let handles = requestHandles.get(RequestKey(method: method, route: route, status: status)) {
            (
                Counter(label: "http_requests_total", dimensions: [("method", method), ("route", route), ("status", String(status))], factory: factory),
                Timer(label: "http_request_duration_seconds", dimensions: [("method", method), ("route", route)], factory: factory),
                status == 429 ? Counter(label: "rate_limit_rejections_total", dimensions: [("route", route)], factory: factory) : nil
            )
        }
        handles.0.increment()
        handles.1.recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
        handles.2?.increment()
    }

    private let requestHandles = HandleCache<RequestKey, (Metrics.Counter, Metrics.Timer, Metrics.Counter?)>()

    /// Weather cache and provider events: `weather_cache_hits_total{layer}`, `weather_cache_misses_total`,
    /// `weather_upstream_calls_total`, `weather_upstream_failures_total`, `weather_served_stale_total`,
    /// `weather_circuit_open_total` (calls refused while the breaker is open), `weather_upstream_refused_total{limit}`
    /// (calls the upstream budget refused: `client` or `deployment`) and the gauge `weather_circuit_open`.
    @Sendable func recordWeather(_ event: WeatherService.Event) {
        let (label, dimensions): (String, [(String, String)])
        switch event {
        case .memoryHit: (label, dimensions) = ("weather_cache_hits_total", [("layer", "memory")])
        case .joinedInFlight: (label, dimensions) = ("weather_cache_hits_total", [("layer", "in_flight")])
        case .databaseHit: (label, dimensions) = ("weather_cache_hits_total", [("layer", "database")])
        case .upstreamCall: (label, dimensions) = ("weather_upstream_calls_total", [])
        case .upstreamFailure: (label, dimensions) = ("weather_upstream_failures_total", [])
        case .servedStale: (label, dimensions) = ("weather_served_stale_total", [])
        case .circuitOpen: (label, dimensions) = ("weather_circuit_open_total", [])
        case .clientLimited: (label, dimensions) = ("weather_upstream_refused_total", [("limit", "client")])
        case .budgetExhausted: (label, dimensions) = ("weather_upstream_refused_total", [("limit", "deployment")])
        }
        weatherHandles.get(label + (dimensions.first?.1 ?? "")) { Counter(label: label, dimensions: dimensions, factory: factory) }.increment()
        switch event {
        case .upstreamCall:
            weatherHandles.get("weather_cache_misses_total") { Counter(label: "weather_cache_misses_total", factory: factory) }.increment()
            setGauge("weather_circuit_open", to: 0)
        case .circuitOpen:
            setGauge("weather_circuit_open", to: 1)
        default:
            break
        }
    }

    private let weatherHandles = HandleCache<String, Metrics.Counter>()

    /// Uploads and storage: `media_uploads_total{outcome}`, `media_upload_bytes_in_total`,
    /// `media_stored_bytes_total` (the JPEGs written), `media_processing_seconds` (a histogram of decode +
    /// encode time), `media_storage_errors_total{operation}`.
    @Sendable func recordMedia(_ event: MediaService.Event) {
        switch event {
        case .upload(let outcome, let bytesIn, let bytesOut, let seconds):
            Counter(label: "media_uploads_total", dimensions: [("outcome", outcome)], factory: factory).increment()
            Counter(label: "media_upload_bytes_in_total", factory: factory).increment(by: bytesIn)
            if bytesOut > 0 { Counter(label: "media_stored_bytes_total", factory: factory).increment(by: bytesOut) }
            if let seconds {
                Timer(label: "media_processing_seconds", factory: factory).recordNanoseconds(Int64(seconds * 1e9))
            }
        case .storageError(let operation):
            Counter(label: "media_storage_errors_total", dimensions: [("operation", operation)], factory: factory).increment()
        }
    }

    /// Media files moved between `public/` and `private/` to follow their posts' visibility.
    func recordMediaMoves(_ count: Int) {
        Counter(label: "media_visibility_moves_total", factory: factory).increment(by: count)
    }

    /// One purger pass: `purged_rows_total{kind}` (rows deleted, or snapshots erased for `report_evidence`),
    /// `purger_passes_total{outcome}` (`ran`, `skipped` while another instance held the lock, `failed`) and
    /// `purger_pass_duration_seconds`.
    func recordPurge(_ pass: Purger.Pass?, duration: Duration) {
        let outcome = pass.map { $0.ran ? "ran" : "skipped" } ?? "failed"
        Counter(label: "purger_passes_total", dimensions: [("outcome", outcome)], factory: factory).increment()
        Timer(label: "purger_pass_duration_seconds", factory: factory)
            .recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
        for (kind, count) in pass?.counts ?? [:] where count > 0 {
            Counter(label: "purged_rows_total", dimensions: [("kind", kind)], factory: factory).increment(by: count)
        }
    }

    /// A cumulative count read from elsewhere (the pool, the weather cache), exported as a counter.
    public func setTotal(_ label: String, dimensions: [(String, String)] = [], to value: Int) {
        let key = label + dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: ",")
        let delta = counterState.delta(key: key, total: value)
        // Made even at zero, so a scrape shows every counter from the start.
        let counter = Counter(label: label, dimensions: dimensions, factory: factory)
        if delta > 0 { counter.increment(by: delta) }
    }

    public func setGauge(_ label: String, dimensions: [(String, String)] = [], to value: Double) {
        Gauge(label: label, dimensions: dimensions, factory: factory).record(value)
    }

    /// Standbys (CONTRACT §12): `db_replica_up{standby}`, `db_replica_lag_seconds{standby}` (-1 while unknown),
    /// `db_reads_total{target}` (reads that could go to a standby, by where they went: `primary` or the standby),
    /// `db_read_fallbacks_total` (standby reads run again on the primary), `db_primary_changes_total` (failovers and
    /// restarts of the primary seen).
    static func replicaCollector(_ reads: ReplicaRouter) -> @Sendable (AppMetrics) -> Void {
        { metrics in
            let snapshot = reads.snapshot
            for standby in snapshot.standbys {
                metrics.setGauge("db_replica_up", dimensions: [("standby", standby.name)], to: standby.up ? 1 : 0)
                metrics.setGauge("db_replica_lag_seconds", dimensions: [("standby", standby.name)], to: standby.lagMilliseconds.map { $0 / 1000 } ?? -1)
                metrics.setTotal("db_reads_total", dimensions: [("target", standby.name)], to: standby.reads)
            }
            metrics.setTotal("db_reads_total", dimensions: [("target", "primary")], to: snapshot.primaryReads)
            metrics.setTotal("db_read_fallbacks_total", to: snapshot.fallbacks)
            metrics.setTotal("db_primary_changes_total", to: snapshot.primaryChanges)
        }
    }

    /// Session checks (`SessionGate`): `auth_session_checks_total{how}` (`statement`: one of its own; `in_read`:
    /// inside the read's statement; `in_write`: the first statement of the write's transaction) and
    /// `auth_refused_total` (tokens answered 401).
    static func sessionCollector(_ checks: SessionCheckCounts) -> @Sendable (AppMetrics) -> Void {
        { metrics in
            metrics.setTotal("auth_session_checks_total", dimensions: [("how", "statement")], to: checks.value(.statement))
            metrics.setTotal("auth_session_checks_total", dimensions: [("how", "in_read")], to: checks.value(.inRead))
            metrics.setTotal("auth_session_checks_total", dimensions: [("how", "in_write")], to: checks.value(.inWrite))
            metrics.setTotal("auth_refused_total", to: checks.value(.refused))
        }
    }

    /// Refreshes the scrape-time values and renders the Prometheus text format.
    func render(database: PostgresPool, extra: [@Sendable (AppMetrics) -> Void]) -> ByteBuffer {
        let usage = database.usage
        setGauge("db_pool_connections_in_use", to: Double(usage.inUse))
        setGauge("db_pool_waiting", to: Double(usage.waiting))
        setGauge("db_pool_size", to: Double(database.configuration.poolSize))
        let pipelined = database.pipelineCounts
        setTotal("db_pipelines_total", to: pipelined.pipelines)
        setTotal("db_pipelined_statements_total", to: pipelined.statements)
        setTotal("db_statements_total", to: database.statementCount)
        for (kind, count) in database.errorCounts {
            setTotal("db_errors_total", dimensions: [("kind", kind)], to: count)
        }
        for collect in extra { collect(self) }
        return ByteBuffer(bytes: registry.emitToBuffer())
    }
}

/// Last-seen totals, to turn cumulative numbers into counter increments.
final class CounterState: Sendable {
    private let totals = Mutex<[String: Int]>([:])

    func delta(key: String, total: Int) -> Int {
        totals.withLock { totals in
            let previous = totals[key] ?? 0
            totals[key] = total
            return max(0, total - previous)
        }
    }
}

struct RequestKey: Hashable, Sendable {
    var method: String
    var route: String
    var status: Int
}

/// A lock-protected map from a key to metric handles made on first use.
final class HandleCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let values = Mutex<[Key: Value]>([:])

    func get(_ key: Key, make: () -> Value) -> Value {
        values.withLock { values in
            if let value = values[key] { return value }
            let value = make()
            values[key] = value
            return value
        }
    }
}
