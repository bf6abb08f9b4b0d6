import CLibPQ
import DequeModule
import Foundation
import Logging
import Synchronization

/// Reads that may be served by a streaming-replication standby (`DATABASE_READ_URL`, CONTRACT §12), and the rules
/// that keep them right.
///
/// Each standby named in the read URL gets a pool of its own (libpq 15 has no `load_balance_hosts`, so the URL's hosts
/// are split here and reads are spread over them in turn). `monitor` samples, every 100 ms, the primary's WAL position
/// and the read fence (on a connection of its own, so a busy pool never delays it), and each standby's replay position;
/// a standby's lag is how long ago the primary passed the position the standby has replayed. Every read names its
/// `ReadPolicy`. A standby read must see the policy's position raised to the `fence` (the last change everyone must see
/// at once: `ReadFence`); it goes to a standby that is up, no more than `maxLagMilliseconds` behind and has replayed that
/// position, and only while the last sample of the primary began within `fenceHorizon` (so it has seen every fence
/// committed before the read began, less that horizon); else to the primary. A read a standby fails (down, a recovery
/// conflict) is run again on the primary: no client sees a standby's failure.
public final class ReplicaRouter: Sendable {
    public struct Standby: Sendable {
        /// `host:port`, for metrics and logs.
        public let name: String
        public let pool: PostgresPool
    }

    /// A standby as the last sample saw it.
    public struct StandbyState: Sendable {
        public var name: String
        public var up: Bool
        /// Replay position (bytes of WAL).
        public var replayed: Int64
        /// nil while down or never sampled.
        public var lagMilliseconds: Double?
        public var reads: Int
    }

    /// How old the last sample of the primary (and so of the read fence) may be for a read to go to a standby; a
    /// fencing write answers its client only this long after its fence committed (`PostgresPool.fencedTransaction`).
    /// Three sampling intervals: a sample or two delayed by load sends reads to the primary, none goes stale. Every
    /// instance of a deployment runs with the default; a test may widen it.
    public static let defaultFenceHorizon: Duration = .milliseconds(300)
    public let fenceHorizon: Duration

    public let primary: PostgresPool
    /// One connection to the primary for `monitor`'s samples.
    let monitorPool: PostgresPool
    public let standbys: [Standby]
    public let maxLagMilliseconds: Int
    private let logger: Logger
    private let state: Mutex<State>

    private struct State {
        var standbys: [StandbyState]
        /// (time, primary WAL position), oldest first, the last minute.
        var samples: Deque<(ContinuousClock.Instant, Int64)> = []
        var fence: Int64 = 0
        /// When the last sample of the primary that succeeded began (it read the stored fence).
        var fenceSampledAt: ContinuousClock.Instant?
        var next = 0
        var primaryReads = 0
        var fallbacks = 0
        var primaryIdentity: String?
        var primaryChanges = 0
    }

    /// `readConninfo`: a libpq URI or conninfo naming one or more standbys (comma-separated hosts).
    public init(
        primary: PostgresPool, readConninfo: String, configuration: PostgresConfiguration, maxLagMilliseconds: Int,
        fenceHorizon: Duration = ReplicaRouter.defaultFenceHorizon, logger: Logger
    ) throws {
        self.primary = primary
        self.fenceHorizon = fenceHorizon
        var monitor = primary.configuration
        monitor.poolSize = 1
        monitor.maxWaitingJobs = 4
        monitorPool = PostgresPool(configuration: monitor, logger: logger)
        self.maxLagMilliseconds = maxLagMilliseconds
        self.logger = logger
        var standbys: [Standby] = []
        for (name, conninfo) in try Self.splitHosts(readConninfo) {
            var standby = configuration
            standby.conninfo = conninfo
            standbys.append(Standby(name: name, pool: PostgresPool(configuration: standby, logger: logger)))
        }
        self.standbys = standbys
        state = Mutex(State(standbys: standbys.map { StandbyState(name: $0.name, up: false, replayed: 0, lagMilliseconds: nil, reads: 0) }))
    }

    // MARK: Reading

    /// Where a read under `policy` goes: a fresh standby that has replayed what it must see (in turn), or nil for the
    /// primary.
    public func target(for policy: ReadPolicy) -> Int? {
        let now = ContinuousClock.now
        return state.withLock { state in
            let after: Int64
            switch policy {
            case .primary:
                state.primaryReads += 1
                return nil
            case .anyStandby: after = 0
            case .standby(let position): after = position
            }
            guard let sampled = state.fenceSampledAt, now - sampled <= fenceHorizon else {
                state.primaryReads += 1
                return nil
            }
            let needed = max(after, state.fence)
            let count = state.standbys.count
            for step in 0..<count {
                let index = (state.next + step) % count
                let standby = state.standbys[index]
                guard standby.up, let lag = standby.lagMilliseconds, lag <= Double(maxLagMilliseconds), standby.replayed >= needed else { continue }
                state.next = index + 1
                state.standbys[index].reads += 1
                return index
            }
            state.primaryReads += 1
            return nil
        }
    }

    /// Runs a read on the pool `target(for: policy)` picks; again on the primary if the standby fails it.
    public func read<T: Sendable>(_ policy: ReadPolicy, _ body: (PostgresPool) async throws -> T) async throws -> T {
        guard let index = target(for: policy) else { return try await body(primary) }
        do {
            return try await body(standbys[index].pool)
        } catch let error as PostgresError where Self.isStandbyFailure(error) {
            state.withLock { state in
                state.standbys[index].up = false
                state.fallbacks += 1
                state.primaryReads += 1
            }
            logger.warning("standby read failed; read again on the primary", metadata: ["standby": "\(standbys[index].name)", "error": "\(error)"])
            return try await body(primary)
        }
    }

    /// Failures of the standby rather than of the statement: unreachable, overloaded, or a query cancelled by a recovery
    /// conflict (40001) or because the server is a standby no more or not yet (25006 read-only, 57P0x).
    static func isStandbyFailure(_ error: PostgresError) -> Bool {
        error.isUnavailable || error.sqlState == "40001" || error.sqlState == "25006" || error.sqlState == "40P01"
    }

    /// The WAL position every standby read must see.
    public var fence: Int64 { state.withLock { $0.fence } }

    /// Every read from now on must see WAL position `lsn` (a change that takes effect at once for everyone): this
    /// instance's reads at once; other instances' through the stored fence (`ReadFence.publish`).
    public func raiseFence(to lsn: Int64) {
        state.withLock { $0.fence = max($0.fence, lsn) }
    }

    /// The primary's WAL position now.
    public func primaryPosition() async throws -> Int64 {
        try await primary.query("SELECT (pg_current_wal_lsn() - '0/0')::bigint AS lsn")[0].decode(Int64.self, "lsn")
    }

    // MARK: Monitoring

    /// Samples the primary, and every standby, every `interval` until cancelled: two loops, so a standby slow to
    /// answer never delays the primary's samples (nor the fence's).
    public func monitor(interval: Duration = .milliseconds(100)) async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                // The primary's samples start `interval` apart whatever each takes (a slow one on a busy machine
                // shortens the wait after it), so the fence's sample stays within `fenceHorizon` as long as one can.
                let clock = ContinuousClock()
                while !Task.isCancelled {
                    let began = clock.now
                    await self.samplePrimary()
                    try? await Task.sleep(until: began + interval, clock: clock)
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    await self.sampleStandbys()
                    try? await Task.sleep(for: interval)
                }
            }
        }
    }

    /// One sample of the primary, then of each standby.
    public func sample() async {
        await samplePrimary()
        await sampleStandbys()
    }

    /// The primary's position, the stored read fence, and who the primary is (a change is a failover or a restart).
    /// The sample counts for the fence from the moment it began: its snapshot is taken after that.
    func samplePrimary() async {
        let clock = ContinuousClock()
        let began = clock.now
        guard let row = try? await monitorPool.query(
            """
            SELECT (pg_current_wal_lsn() - '0/0')::bigint AS lsn, \(raw: ReadFence.current) AS fence,
                   coalesce(host(inet_server_addr()), 'local') || ':' || coalesce(inet_server_port(), 0) || '@' || pg_postmaster_start_time() AS who
            """,
            timeoutMilliseconds: 1000
        ).first, let lsn = try? row.decode(Int64.self, "lsn"), let fence = try? row.decode(Int64.self, "fence"),
            let who = try? row.decode(String.self, "who")
        else { return }
        let now = clock.now
        state.withLock { state in
            state.samples.append((now, lsn))
            while let first = state.samples.first, now - first.0 > .seconds(60) { state.samples.removeFirst() }
            if let known = state.primaryIdentity, known != who { state.primaryChanges += 1 }
            state.primaryIdentity = who
            state.fence = max(state.fence, fence)
            state.fenceSampledAt = max(state.fenceSampledAt ?? began, began)
        }
    }

    /// Each standby's replay position and lag.
    func sampleStandbys() async {
        let clock = ContinuousClock()
        for (index, standby) in standbys.enumerated() {
            let replayed: Int64? = try? await standby.pool.query(
                """
                SELECT CASE WHEN pg_is_in_recovery() THEN (pg_last_wal_replay_lsn() - '0/0')::bigint
                            ELSE (pg_current_wal_lsn() - '0/0')::bigint END AS lsn
                """,
                timeoutMilliseconds: 500
            ).first?.decode(Int64?.self, "lsn")
            let now = clock.now
            state.withLock { state in
                guard let replayed else {
                    state.standbys[index].up = false
                    state.standbys[index].lagMilliseconds = nil
                    return
                }
                state.standbys[index].up = true
                state.standbys[index].replayed = replayed
                state.standbys[index].lagMilliseconds = Self.lag(replayed: replayed, samples: state.samples, now: now)
            }
        }
    }

    /// How long the standby is behind: 0 when it has replayed the latest sample, else the time since the last sample
    /// at or below its position (the primary passed it after that one: an upper bound, never an underestimate); nil
    /// when even the oldest sample is past it (unknown: not fresh).
    static func lag(replayed: Int64, samples: Deque<(ContinuousClock.Instant, Int64)>, now: ContinuousClock.Instant) -> Double? {
        guard let latest = samples.last else { return nil }
        if replayed >= latest.1 { return 0 }
        guard let index = samples.firstIndex(where: { $0.1 > replayed }), index > samples.startIndex else { return nil }
        let elapsed = now - samples[samples.index(before: index)].0
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }

    /// For `/metrics`.
    public var snapshot: (standbys: [StandbyState], primaryReads: Int, fallbacks: Int, primaryChanges: Int) {
        state.withLock { ($0.standbys, $0.primaryReads, $0.fallbacks, $0.primaryChanges) }
    }

    public func shutdown() {
        monitorPool.shutdown()
        for standby in standbys { standby.pool.shutdown() }
    }

    // MARK: Hosts

    /// One conninfo per host of `conninfo` (a URI or `key=value` string; `host` and `port` may list several), each with
    /// every other setting kept; named `host:port`.
    public static func splitHosts(_ conninfo: String) throws -> [(String, String)] {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &error) else {
            let message = error.map { String(cString: $0) } ?? "out of memory"
            if let error { PQfreemem(error) }
            throw PostgresError(kind: .connection, message: "DATABASE_READ_URL: \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        defer { PQconninfoFree(options) }
        var settings: [(String, String)] = []
        var index = 0
        while let keyword = options[index].keyword {
            if let value = options[index].val { settings.append((String(cString: keyword), String(cString: value))) }
            index += 1
        }
        func values(_ key: String) -> [String] {
            settings.first { $0.0 == key }.map { $0.1.split(separator: ",", omittingEmptySubsequences: false).map(String.init) } ?? []
        }
        let hosts = values("host"), addresses = values("hostaddr"), ports = values("port")
        let count = max(hosts.count, addresses.count, 1)
        guard ports.count <= 1 || ports.count == count else {
            throw PostgresError(kind: .connection, message: "DATABASE_READ_URL: \(ports.count) ports for \(count) hosts")
        }
        let rest = settings.filter { !["host", "hostaddr", "port"].contains($0.0) && !$0.1.isEmpty }
        return (0..<count).map { i in
            var pairs = rest
            if i < hosts.count, !hosts[i].isEmpty { pairs.append(("host", hosts[i])) }
            if i < addresses.count, !addresses[i].isEmpty { pairs.append(("hostaddr", addresses[i])) }
            let port = ports.count == count ? ports[i] : ports.first
            if let port, !port.isEmpty { pairs.append(("port", port)) }
            let name = (i < hosts.count && !hosts[i].isEmpty ? hosts[i] : (i < addresses.count ? addresses[i] : "local")) + ":"
                + (port.flatMap { $0.isEmpty ? nil : $0 } ?? "5432")
            let info = pairs.map { key, value in
                key + "='" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
            }.joined(separator: " ")
            return (name, info)
        }
    }
}
