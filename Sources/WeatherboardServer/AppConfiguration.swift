import Database
import Foundation
import MediaStorage
import Logging

/// Everything `weatherboard serve` reads from its environment (CONTRACT §7). Flags override these.
public struct AppConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    public var databaseURL: String = ""
    /// `DATABASE_READ_URL`: standbys for the reads that may be served by one (CONTRACT §12); nil: the primary only.
    public var databaseReadURL: String?
    /// `DATABASE_MAX_REPLICA_LAG_MS`: a standby further behind than this is not read from.
    public var maxReplicaLagMilliseconds: Int = 500
    /// Twice the CPU cores, at least 4: every connection has its own thread, and on a small machine more
    /// threads than that only add context switches (measured in bench/README.md).
    public var dbPoolSize: Int = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
    public var dbStatementTimeoutMilliseconds: Int = 5000
    /// Single statements sent to PostgreSQL together when every connection is busy (1 = off).
    public var dbPipelineDepth: Int = 8
    /// `DB_QUEUE_MAX`: requests' database jobs that may wait for a connection at once; one more answers 503
    /// `database_unavailable` at once instead of waiting to time out.
    public var dbQueueMax: Int = 1000
    public var weatherProvider: String = "open-meteo"
    public var weatherBaseURL: String?
    public var openWeatherMapAPIKey: String?
    public var kmaServiceKey: String?
    public var weatherTTLSeconds: Int = 600
    /// Requests a minute from one client address that need an upstream weather call (429 past it).
    public var weatherColdPerMinute: Int = 20
    /// Upstream weather calls a minute for the whole deployment (stale value or 503 past it).
    public var weatherUpstreamPerMinute: Int = 300
    public var reportHideThreshold: Int = 3
    public var reportTrustAgeSeconds: Int = 86_400
    /// `REPORT_EVIDENCE_DAYS`: resolved reports keep their snapshots this long.
    public var reportEvidenceDays: Int = 180
    /// `PURGE_INTERVAL_SECONDS`: how often the background purger runs (one instance at a time).
    public var purgeIntervalSeconds: Int = 300
    /// Peers whose `X-Forwarded-For` is believed (exact addresses or CIDR ranges).
    public var trustedProxies: [String] = []
    public var rateLimitsEnabled: Bool = true
    public var logLevel: Logger.Level = .info
    public var logFormat: String = "text"
    /// `KEEPALIVE_TIMEOUT_SECONDS`: a kept-alive connection with no byte of a next request this long after its last
    /// answer is closed (between requests only; nginx's `keepalive_timeout`).
    public var idleTimeoutSeconds: Int = 75
    /// `HEADER_TIMEOUT_SECONDS`: a request head must be whole this long after the connection opened (or, on a
    /// kept-alive connection, after the first byte of the request); past it 408 if any byte came, else the connection
    /// is closed (nginx's `client_header_timeout`).
    public var headerTimeoutSeconds: Int = 60
    /// `BODY_TIMEOUT_SECONDS`: the longest the server waits on the client between two reads of a body, every request
    /// (408 `request_timeout`, then the connection is closed; nginx's `client_body_timeout`).
    public var bodyTimeoutSeconds: Int = 60
    /// `REQUEST_BODY_DEADLINE_SECONDS`: a whole body other than an upload must arrive within this after its head
    /// (408 `request_timeout`): a trickle cannot last forever. Uploads have `MEDIA_UPLOAD_TIMEOUT_SECONDS`.
    public var requestBodyDeadlineSeconds: Int = 30
    /// How long SIGTERM waits for in-flight requests before giving up.
    public var shutdownGraceSeconds: Int = 25
    /// Concurrent password hashes (each needs 128 MiB with scrypt at OWASP parameters).
    public var passwordHashThreads: Int = 2

    // MARK: Media (CONTRACT §7–§8)
    /// `MEDIA_STORAGE` (`local`: MEDIA_DIR, default `.local/media`; `s3`: S3_*), `MEDIA_PUBLIC_BASE_URL`
    /// (empty: this server's own `/media/`), read by the storage module's own parser.
    public var mediaStorage = MediaStorageConfiguration.local(directory: ".local/media")
    /// `MEDIA_MAX_BYTES`: larger uploads answer 413.
    public var mediaMaxBytes: Int = 16 * 1024 * 1024
    /// `MEDIA_UPLOAD_TIMEOUT_SECONDS`: an upload's whole body must arrive within this (408 and its temporary file
    /// removed otherwise); 16 MiB in 120 s is a little over 1 Mbit/s.
    public var mediaUploadTimeoutSeconds: Int = 120
    /// Where uploads are streamed to before they are decoded (`TMPDIR`).
    public var uploadTemporaryDirectory: String = NSTemporaryDirectory()
    /// Images decoded at once (each on its own thread, off the request threads), and how many may wait.
    public var imageThreads: Int = 2
    public var imageQueue: Int = 8
    /// `MEDIA_SYNC_SECONDS`: how often media files are moved to match their posts' visibility (also right
    /// after each moderation decision); the contract allows a minute.
    public var mediaSyncSeconds: Int = 15
    /// The live board (CONTRACT §11): `STREAM_HEARTBEAT_SECONDS`, `STREAM_BACKLOG_SECONDS`, `STREAM_BUFFER_EVENTS`,
    /// `STREAM_MAX_PER_CLIENT`, `STREAM_MAX`.
    public var streamHeartbeatSeconds: Int = 15
    public var streamBacklogSeconds: Int = 3600
    public var streamBufferEvents: Int = 256
    public var streamMaxPerClient: Int = 8
    public var streamMax: Int = 20_000
    /// `PUSH=apns` and its `APNS_*` (CONTRACT §14); nil: `PUSH=off`, devices and settings stored, nothing sent.
    public var push: PushConfiguration?

    public init() {}

    /// Reads the contract's environment variables; unknown or malformed values are reported, not ignored.
    public init(environment: [String: String]) throws {
        func int(_ name: String, _ range: ClosedRange<Int>) throws -> Int? {
            guard let raw = environment[name], !raw.isEmpty else { return nil }
            guard let value = Int(raw), range.contains(value) else {
                throw ConfigurationError("\(name) must be an integer in \(range.lowerBound)...\(range.upperBound), got '\(raw)'")
            }
            return value
        }
        func string(_ name: String) -> String? {
            guard let raw = environment[name], !raw.isEmpty else { return nil }
            return raw
        }
        if let v = string("HOST") { host = v }
        if let v = try int("PORT", 0...65535) { port = v }
        if let v = string("DATABASE_URL") { databaseURL = v }
        databaseReadURL = string("DATABASE_READ_URL")
        if let url = databaseReadURL {
            do {
                _ = try ReplicaRouter.splitHosts(url)
            } catch {
                throw ConfigurationError("DATABASE_READ_URL is not a libpq URI or conninfo: \(error)")
            }
        }
        if let v = try int("DATABASE_MAX_REPLICA_LAG_MS", 0...3_600_000) { maxReplicaLagMilliseconds = v }
        if let v = try int("DB_POOL_SIZE", 1...256) { dbPoolSize = v }
        if let v = try int("DB_STATEMENT_TIMEOUT_MS", 1...3_600_000) { dbStatementTimeoutMilliseconds = v }
        if let v = try int("DB_PIPELINE_DEPTH", 1...64) { dbPipelineDepth = v }
        if let v = try int("DB_QUEUE_MAX", 1...1_000_000) { dbQueueMax = v }
        if let v = string("WEATHER_PROVIDER") {
            guard ["open-meteo", "openweathermap", "kma", "none"].contains(v) else {
                throw ConfigurationError("WEATHER_PROVIDER must be open-meteo, openweathermap, kma or none, got '\(v)'")
            }
            weatherProvider = v
        }
        weatherBaseURL = string("WEATHER_BASE_URL")
        openWeatherMapAPIKey = string("OPENWEATHERMAP_API_KEY")
        kmaServiceKey = string("KMA_SERVICE_KEY")
        if let v = try int("WEATHER_TTL_SECONDS", 1...86_400) { weatherTTLSeconds = v }
        if let v = try int("WEATHER_COLD_PER_MINUTE", 1...100_000) { weatherColdPerMinute = v }
        if let v = try int("WEATHER_UPSTREAM_PER_MINUTE", 1...1_000_000) { weatherUpstreamPerMinute = v }
        if let v = try int("REPORT_HIDE_THRESHOLD", 1...1000) { reportHideThreshold = v }
        if let v = try int("REPORT_TRUST_AGE_SECONDS", 0...31_536_000) { reportTrustAgeSeconds = v }
        if let v = try int("REPORT_EVIDENCE_DAYS", 0...36_500) { reportEvidenceDays = v }
        if let v = try int("PURGE_INTERVAL_SECONDS", 1...86_400) { purgeIntervalSeconds = v }
        do {
            mediaStorage = try MediaStorageConfiguration(environment: environment, defaultDirectory: ".local/media", defaultPublicBaseURL: "")
        } catch let error as MediaStorageConfiguration.InvalidValue {
            throw ConfigurationError(error.description)
        }
        if let v = try int("MEDIA_MAX_BYTES", 1024...(512 * 1024 * 1024)) { mediaMaxBytes = v }
        if let v = try int("MEDIA_UPLOAD_TIMEOUT_SECONDS", 1...3600) { mediaUploadTimeoutSeconds = v }
        if let v = try int("HEADER_TIMEOUT_SECONDS", 1...3600) { headerTimeoutSeconds = v }
        if let v = try int("BODY_TIMEOUT_SECONDS", 1...3600) { bodyTimeoutSeconds = v }
        if let v = try int("REQUEST_BODY_DEADLINE_SECONDS", 1...3600) { requestBodyDeadlineSeconds = v }
        if let v = try int("KEEPALIVE_TIMEOUT_SECONDS", 1...3600) { idleTimeoutSeconds = v }
        if let v = try int("MEDIA_SYNC_SECONDS", 1...60) { mediaSyncSeconds = v }
        if let v = try int("STREAM_HEARTBEAT_SECONDS", 1...3600) { streamHeartbeatSeconds = v }
        if let v = try int("STREAM_BACKLOG_SECONDS", 0...604_800) { streamBacklogSeconds = v }
        if let v = try int("STREAM_BUFFER_EVENTS", 1...100_000) { streamBufferEvents = v }
        if let v = try int("STREAM_MAX_PER_CLIENT", 1...100_000) { streamMaxPerClient = v }
        if let v = try int("STREAM_MAX", 1...1_000_000) { streamMax = v }
        if let v = string("TRUSTED_PROXIES") {
            trustedProxies = v.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        }
        if let v = string("RATE_LIMITS") {
            switch v.lowercased() {
            case "on", "true", "1": rateLimitsEnabled = true
            case "off", "false", "0": rateLimitsEnabled = false
            default: throw ConfigurationError("RATE_LIMITS must be on or off, got '\(v)'")
            }
        }
        // `PUSH` (CONTRACT §14): `off`, the default, stores devices and settings and sends nothing; `apns` needs every
        // `APNS_*` it cannot do without, checked here, before the server starts.
        if let v = string("PUSH") {
            switch v.lowercased() {
            case "off": push = nil
            case "apns":
                var apns = PushConfiguration(
                    teamID: try required("APNS_TEAM_ID"), keyID: try required("APNS_KEY_ID"),
                    privateKeyFile: try required("APNS_PRIVATE_KEY_FILE"), topic: try required("APNS_TOPIC")
                )
                if let v = string("APNS_PRODUCTION_URL") { apns.productionURL = v }
                if let v = string("APNS_SANDBOX_URL") { apns.sandboxURL = v }
                apns.caFile = string("APNS_CA_FILE")
                if let v = try int("PUSH_LEASE_SECONDS", 5...3600) { apns.leaseSeconds = v }
                push = apns
            default: throw ConfigurationError("PUSH must be off or apns, got '\(v)'")
            }
        }
        func required(_ name: String) throws -> String {
            guard let value = string(name) else { throw ConfigurationError("PUSH=apns needs \(name)") }
            return value
        }
        if let v = string("LOG_LEVEL") {
            guard let level = Logger.Level(rawValue: v.lowercased()) else {
                throw ConfigurationError("LOG_LEVEL must be one of trace, debug, info, notice, warning, error, critical; got '\(v)'")
            }
            logLevel = level
        }
        if let v = string("LOG_FORMAT") {
            guard ["text", "json"].contains(v) else { throw ConfigurationError("LOG_FORMAT must be text or json, got '\(v)'") }
            logFormat = v
        }
    }
}

public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
