import Database
import Foundation
import Testing
import Weather

/// A database of a plan suite's own: a copy (`CREATE DATABASE … TEMPLATE`) of a migrated, vacuumed and analyzed
/// template, so its plans and buffer counts depend on its own rows alone, never on what other suites wrote, left dead
/// or moved the statistics with.
///
/// The template is `<test database>_plan_template`; each copy is `<test database>_plan_<suite>_<pid>`, dropped when the
/// suite's body returns. A copy left by a killed run has no session, and the next copy's creation drops it; a copy
/// in use by another test process has its keeper's session, and stays. The template and the copies are made in
/// turns (`copyLock`, on the shared test database): `CREATE DATABASE … TEMPLATE` fails while any session is on the
/// template, and the migrations run there.
extension TestDatabase {
    /// The advisory lock on the shared test database that the template's migration and the copies take turns with
    /// ("plancopy" in ASCII).
    static let copyLock = 0x706c_616e_636f_7079

    /// Runs `body` with the URL of a fresh copy of the migrated template, then drops the copy. `suite` names the copy
    /// (lowercase letters).
    static func isolated<T: Sendable>(named suite: String, _ body: (String) async throws -> T) async throws -> T {
        let url = TestDatabase.url
        let base = databaseName(in: url)
        let prefix = "\(base)_plan_"
        let template = prefix + "template"
        let copy = prefix + "\(suite)_\(getpid())"
        let admin = PostgresPool(configuration: PostgresConfiguration(conninfo: url, poolSize: 1, statementTimeoutMilliseconds: 0))
        defer { admin.shutdown() }
        // The pool's one session holds the lock between these calls.
        try await admin.withConnection { _ = try $0.query("SELECT pg_advisory_lock(\(copyLock))") }
        let keeper: PostgresPool
        do {
            try await admin.withConnection { connection in
                try dropUnused(prefix: prefix, except: template, on: connection)
                if try connection.query("SELECT count(*) AS n FROM pg_database WHERE datname = \(template)")[0].decode(Int.self, "n") == 0 {
                    // Names from the test database's own, never input.
                    try connection.simpleQuery("CREATE DATABASE \(quoted(template))")
                }
            }
            try await prepareTemplate(replacingDatabase(in: url, with: template))
            try await admin.withConnection { connection in
                try drop(copy, on: connection)
                try connection.simpleQuery("CREATE DATABASE \(quoted(copy)) TEMPLATE \(quoted(template))")
            }
            // A session on the copy while it exists: another process's clean-up leaves it alone.
            keeper = PostgresPool(configuration: PostgresConfiguration(conninfo: replacingDatabase(in: url, with: copy), poolSize: 1, statementTimeoutMilliseconds: 0))
            try await keeper.withConnection { _ = try $0.query("SELECT 1 AS one") }
            try await admin.withConnection { _ = try $0.query("SELECT pg_advisory_unlock(\(copyLock))") }
        } catch {
            try? await admin.withConnection { _ = try $0.query("SELECT pg_advisory_unlock(\(copyLock))") }
            throw error
        }
        let result: Result<T, any Error>
        do { result = .success(try await body(replacingDatabase(in: url, with: copy))) } catch { result = .failure(error) }
        keeper.shutdown()
        try await admin.withConnection { try drop(copy, on: $0) }
        return try result.get()
    }

    /// Migrates the template as `weatherboard migrate` does (nothing to do once it is current), then vacuums and
    /// analyzes it, so every copy starts with all-visible pages and the same statistics. Its sessions end before it
    /// returns: a template with a session cannot be copied.
    private static func prepareTemplate(_ templateURL: String) async throws {
        let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: templateURL, poolSize: 1, statementTimeoutMilliseconds: 0))
        defer { pool.shutdown() }
        let migrated = try await Migrator(directory: sqlDirectory).run(on: pool, logger: testLogger)
        let loaded = try await RegionCatalog.load(file: RegionCatalog.file(inMigrationsDirectory: sqlDirectory), on: pool, logger: testLogger)
        if !migrated.applied.isEmpty || loaded.loadedRegions != nil {
            try await pool.withConnection { try $0.simpleQuery("VACUUM (ANALYZE)") }
        }
    }

    /// Drops database `name`, if present. Plainly first: that stops an autovacuum worker busy on it (a copy's rolled-back
    /// load leaves dead rows), where `WITH (FORCE)` refuses to, its process having no role the test's may signal (42501,
    /// seen in a fresh-clone run). Then, if a session is still on it (55006: the keeper's, not yet gone), with FORCE.
    private static func drop(_ name: String, on connection: PostgresConnection) throws {
        do {
            try connection.simpleQuery("DROP DATABASE IF EXISTS \(quoted(name))")
        } catch let error as PostgresError where error.sqlState == "55006" {
            try connection.simpleQuery("DROP DATABASE IF EXISTS \(quoted(name)) WITH (FORCE)")
        }
    }

    /// Drops the databases named `prefix…` (but `template`) that no session uses: copies of runs that ended before
    /// their clean-up. Plain `DROP DATABASE` refuses one in use (SQLSTATE 55006): another test process's copy.
    private static func dropUnused(prefix: String, except template: String, on connection: PostgresConnection) throws {
        let stale = try connection.query(
            "SELECT datname FROM pg_database WHERE left(datname, length(\(prefix))) = \(prefix) AND datname <> \(template)"
        ).map { try $0.decode(String.self, "datname") }
        for name in stale {
            do {
                try connection.simpleQuery("DROP DATABASE IF EXISTS \(quoted(name))")
            } catch let error as PostgresError where error.sqlState == "55006" {
                continue
            }
        }
    }

    /// The statistics of `tables` from every row they hold (up to 300,000), so two runs plan on the same numbers: with
    /// PostgreSQL's default target ANALYZE samples 30,000 rows at random.
    static func analyzeEveryRow(_ tables: [String], on connection: PostgresConnection) throws {
        try connection.simpleQuery("SET LOCAL default_statistics_target = 1000")
        for table in tables { try connection.simpleQuery("ANALYZE \(table)") }
        try connection.simpleQuery("SET LOCAL default_statistics_target = DEFAULT")
    }

    static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The database a `postgresql://…/name?…` URL names.
    static func databaseName(in url: String) -> String {
        URLComponents(string: url).map { String($0.path.drop { $0 == "/" }) } ?? ""
    }

    /// `url` with its database replaced by `name` (its query, such as `sslmode`, kept).
    static func replacingDatabase(in url: String, with name: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.path = "/" + name
        return components.string ?? url
    }

    /// `url` with `application_name` set: the sessions a test opens, told apart in `pg_stat_activity`.
    static func withApplicationName(_ name: String, _ url: String) -> String {
        withParameter("application_name", name, url)
    }

    /// `url` with the libpq parameter `name` set to `value` (a URL's parameters override the connection's defaults).
    static func withParameter(_ name: String, _ value: String, _ url: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.queryItems = (components.queryItems ?? []).filter { $0.name != name } + [URLQueryItem(name: name, value: value)]
        return components.string ?? url
    }
}
