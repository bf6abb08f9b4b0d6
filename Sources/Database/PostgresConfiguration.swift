import Foundation

/// How to reach PostgreSQL and how hard to use it.
public struct PostgresConfiguration: Sendable {
    /// libpq URI (`postgresql://…`) or conninfo (`host=… dbname=…`); empty uses the `PG*` variables.
    public var conninfo: String
    /// Connections, each on its own dedicated thread (`DB_POOL_SIZE`).
    public var poolSize: Int
    /// Server-side `statement_timeout` and `lock_timeout` (`DB_STATEMENT_TIMEOUT_MS`).
    public var statementTimeoutMilliseconds: Int
    /// How long a caller may wait for a free connection before it gets `.poolTimeout`.
    public var acquireTimeoutMilliseconds: Int
    /// libpq `connect_timeout`, in seconds.
    public var connectTimeoutSeconds: Int
    /// After a failed connection attempt, a worker answers `.connection` at once for this long instead of
    /// trying again for every request, so an outage gives fast 503s.
    public var reconnectBackoffMilliseconds: Int
    /// At most this many single statements, queued while every connection was busy, go to PostgreSQL in
    /// one pipeline (`DB_PIPELINE_DEPTH`; 1 turns pipelining off). See `PostgresConnection.pipeline`.
    public var pipelineDepth: Int
    /// Connections kept working at once while statements queue (the CPU cores by default). The rest of the
    /// pool stands by and steps in when the oldest queued job has waited `spareAfterMilliseconds` (a slow
    /// statement or transaction holds a connection), so a slow query never stalls the others for long.
    /// Fewer busy connections mean deeper pipelines and fewer PostgreSQL processes competing for the CPU.
    public var activeConnections: Int
    public var spareAfterMilliseconds: Int
    /// Jobs that may wait for a connection at once (`DB_QUEUE_MAX`). One more fails at once with
    /// `.queueFull` (503 `database_unavailable`): past this many, waiting only turns into a pool timeout later.
    public var maxWaitingJobs: Int

    public init(
        conninfo: String,
        poolSize: Int = 8,
        statementTimeoutMilliseconds: Int = 5000,
        acquireTimeoutMilliseconds: Int? = nil,
        connectTimeoutSeconds: Int = 3,
        reconnectBackoffMilliseconds: Int = 250,
        pipelineDepth: Int = 8,
        activeConnections: Int? = nil,
        spareAfterMilliseconds: Int = 10,
        maxWaitingJobs: Int = 1000
    ) {
        self.conninfo = conninfo
        self.poolSize = max(1, poolSize)
        self.statementTimeoutMilliseconds = statementTimeoutMilliseconds
        self.acquireTimeoutMilliseconds = acquireTimeoutMilliseconds ?? max(1000, statementTimeoutMilliseconds)
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.reconnectBackoffMilliseconds = reconnectBackoffMilliseconds
        self.pipelineDepth = min(64, max(1, pipelineDepth))
        self.activeConnections = min(self.poolSize, max(1, activeConnections ?? ProcessInfo.processInfo.activeProcessorCount))
        self.spareAfterMilliseconds = max(1, spareAfterMilliseconds)
        self.maxWaitingJobs = max(1, maxWaitingJobs)
    }
}
