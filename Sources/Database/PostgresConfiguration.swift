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

    public init(
        conninfo: String,
        poolSize: Int = 8,
        statementTimeoutMilliseconds: Int = 5000,
        acquireTimeoutMilliseconds: Int? = nil,
        connectTimeoutSeconds: Int = 3,
        reconnectBackoffMilliseconds: Int = 250
    ) {
        self.conninfo = conninfo
        self.poolSize = max(1, poolSize)
        self.statementTimeoutMilliseconds = statementTimeoutMilliseconds
        self.acquireTimeoutMilliseconds = acquireTimeoutMilliseconds ?? max(1000, statementTimeoutMilliseconds)
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.reconnectBackoffMilliseconds = reconnectBackoffMilliseconds
    }
}
