import Foundation
import Logging

/// Applies the numbered SQL files of a directory (`0001_name.sql`, `0002_…`) in order, each once, each in
/// its own transaction, recording its SHA-256 in `schema_migrations`. Concurrent runs are serialized by an
/// advisory lock. A file that changed after it was applied is refused. A file that starts with
/// `-- migrate: online` runs statement by statement outside a transaction (`Migrator+Online.swift`), so it can
/// build indexes `CONCURRENTLY` while the board keeps writing.
public struct Migrator: Sendable {
    public struct Migration: Sendable, Equatable {
        public var version: Int
        public var name: String
        public var sql: String

        public init(version: Int, name: String, sql: String) {
            self.version = version
            self.name = name
            self.sql = sql
        }
    }

    public struct Outcome: Sendable, Equatable {
        public var applied: [String]
        public var alreadyApplied: Int
    }

    /// Arbitrary, fixed key for `pg_advisory_lock`: "wbmigrat" in ASCII.
    static let lockKey: Int = 0x7762_6d69_6772_6174
    /// How long a run waits between two tries of the migration lock while another instance migrates.
    static let lockRetrySeconds = 0.1

    public let migrations: [Migration]

    public init(directory: URL) throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        var migrations: [Migration] = []
        for file in files.sorted() where file.hasSuffix(".sql") {
            guard let underscore = file.firstIndex(of: "_"), let version = Int(file[..<underscore]), file[..<underscore].count == 4 else {
                throw PostgresError(kind: .decoding, message: "migration file name '\(file)' must look like 0001_name.sql")
            }
            let sql = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            if migrations.last?.version == version {
                throw PostgresError(kind: .decoding, message: "two migrations share version \(version)")
            }
            migrations.append(Migration(version: version, name: file, sql: sql))
        }
        self.migrations = migrations
    }

    public init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Finds the `sql/` directory: an explicit path, `$WEATHERBOARD_SQL_DIR`, `<prefix>/share/weatherboard/sql`
    /// next to the executable, or the nearest `sql/` above the executable (a source checkout's `.build/…`).
    public static func locateDirectory(explicit: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL? {
        func valid(_ url: URL) -> Bool {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else { return false }
            return ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).contains { $0.hasPrefix("0001_") }
        }
        if let explicit, !explicit.isEmpty { return URL(fileURLWithPath: explicit) }
        if let fromEnvironment = environment["WEATHERBOARD_SQL_DIR"], !fromEnvironment.isEmpty {
            return URL(fileURLWithPath: fromEnvironment)
        }
        let executable = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
            .standardizedFileURL
        var directory = executable.deletingLastPathComponent()
        let installed = directory.deletingLastPathComponent().appendingPathComponent("share/weatherboard/sql")
        if valid(installed) { return installed }
        for _ in 0..<8 {
            let candidate = directory.appendingPathComponent("sql")
            if valid(candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("sql")
        return valid(cwd) ? cwd : nil
    }

    /// Applies what is missing. Safe to run twice, and from two processes at once.
    public func run(on pool: PostgresPool, logger: Logger) async throws -> Outcome {
        let migrations = self.migrations
        return try await pool.withConnection(timeoutMilliseconds: 60_000) { connection in
            try Self.apply(migrations, on: connection, logger: logger)
        }
    }

    static func apply(_ migrations: [Migration], on connection: PostgresConnection, logger: Logger) throws -> Outcome {
        // Migrations may legitimately run longer than a request's statement timeout. The session's own values
        // are put back afterwards (RESET would go to the server's defaults, not to the pool's), and the lock
        // released, even when the run is cancelled or fails (`restoreSession`).
        let saved = try connection.query(
            "SELECT current_setting('statement_timeout') AS statement_timeout, current_setting('lock_timeout') AS lock_timeout"
        )[0]
        let statementTimeout = try saved.decode(String.self, "statement_timeout")
        let lockTimeout = try saved.decode(String.self, "lock_timeout")
        try connection.simpleQuery("SET statement_timeout = 0; SET lock_timeout = 0")
        defer {
            connection.restoreSession(
                "SELECT set_config('statement_timeout', \(statementTimeout), false), set_config('lock_timeout', \(lockTimeout), false)"
            )
        }
        // Taken by trying, not by waiting: a session waiting inside `pg_advisory_lock` holds a snapshot, and the
        // holder's `CREATE INDEX CONCURRENTLY` (an online migration) waits for every older snapshot; PostgreSQL then
        // finds the deadlock and kills one of the two (seen with two instances migrating at once). Between tries a
        // waiting instance holds none; on this connection's own thread, and a cancelled run's next try fails at once.
        while try !connection.query("SELECT pg_try_advisory_lock(\(lockKey)) AS locked")[0].decode(Bool.self, "locked") {
            Thread.sleep(forTimeInterval: Self.lockRetrySeconds)
        }
        defer { connection.restoreSession("SELECT pg_advisory_unlock(\(lockKey))") }

        try connection.simpleQuery("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version integer PRIMARY KEY,
                name text NOT NULL,
                checksum text NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """)
        var known: [Int: (name: String, checksum: String)] = [:]
        for row in try connection.query("SELECT version, name, checksum FROM schema_migrations") {
            known[try row.decode(Int.self, "version")] = (try row.decode(String.self, "name"), try row.decode(String.self, "checksum"))
        }
        var outcome = Outcome(applied: [], alreadyApplied: 0)
        for migration in migrations {
            let checksum = try connection.query("SELECT encode(sha256(convert_to(\(migration.sql), 'UTF8')), 'hex') AS sum")[0].decode(String.self, "sum")
            if let existing = known[migration.version] {
                guard existing.checksum == checksum else {
                    throw PostgresError(
                        kind: .server,
                        message: "migration \(migration.name) was changed after it was applied (recorded sha256 \(existing.checksum.prefix(12))…, file now \(checksum.prefix(12))…); add a new migration instead of editing an applied one"
                    )
                }
                outcome.alreadyApplied += 1
                continue
            }
            if migration.isOnline {
                try Self.applyOnline(migration, on: connection)
                try connection.execute("INSERT INTO schema_migrations (version, name, checksum) VALUES (\(migration.version), \(migration.name), \(checksum))")
            } else {
                try connection.transaction { connection in
                    try connection.simpleQuery(migration.sql)
                    try connection.execute("INSERT INTO schema_migrations (version, name, checksum) VALUES (\(migration.version), \(migration.name), \(checksum))")
                }
            }
            logger.info("applied migration", metadata: ["migration": "\(migration.name)"])
            outcome.applied.append(migration.name)
        }
        return outcome
    }
}
