@testable import Database
import Foundation
import Logging
import Testing

@Suite("Migrations")
struct MigratorTests {
    let logger = Logger(label: "test.migrator")

    static let migrations = [
        Migrator.Migration(version: 1, name: "0001_things.sql", sql: "CREATE TABLE things (id int PRIMARY KEY, name text NOT NULL);"),
        Migrator.Migration(version: 2, name: "0002_more.sql", sql: "ALTER TABLE things ADD COLUMN size int; INSERT INTO things VALUES (1, 'one', 1);"),
    ]

    @Test("each migration applies once, in order; a second run applies nothing")
    func idempotent() async throws {
        try await TestDatabase.withScratchDatabase { url in
            let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: url, poolSize: 1))
            defer { pool.shutdown() }
            let first = try await Migrator(migrations: Self.migrations).run(on: pool, logger: logger)
            #expect(first.applied == ["0001_things.sql", "0002_more.sql"])
            let second = try await Migrator(migrations: Self.migrations).run(on: pool, logger: logger)
            #expect(second.applied.isEmpty)
            #expect(second.alreadyApplied == 2)
            #expect(try await pool.query("SELECT count(*) AS n FROM things")[0].decode(Int.self, "n") == 1)
            let recorded = try await pool.query("SELECT version, checksum FROM schema_migrations ORDER BY version")
            #expect(recorded.count == 2)
            #expect(try recorded[0].decode(String.self, "checksum").count == 64)
        }
    }

    @Test("four concurrent runs are serialized: every migration applies exactly once")
    func concurrent() async throws {
        try await TestDatabase.withScratchDatabase { url in
            let outcomes = try await withThrowingTaskGroup(of: Migrator.Outcome.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: url, poolSize: 1))
                        defer { pool.shutdown() }
                        return try await Migrator(migrations: Self.migrations).run(on: pool, logger: Logger(label: "test"))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.map(\.applied.count).reduce(0, +) == 2)
            #expect(outcomes.filter { !$0.applied.isEmpty }.count == 1)
        }
    }

    @Test("a changed, already-applied migration is refused with a clear message, and nothing after it runs")
    func changedFileRefused() async throws {
        try await TestDatabase.withScratchDatabase { url in
            let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: url, poolSize: 1))
            defer { pool.shutdown() }
            _ = try await Migrator(migrations: [Self.migrations[0]]).run(on: pool, logger: logger)
            var edited = Self.migrations
            edited[0].sql += "\n-- edited"
            let error = try await #require(throws: PostgresError.self) {
                try await Migrator(migrations: edited).run(on: pool, logger: logger)
            }
            #expect(error.message.contains("0001_things.sql"))
            #expect(error.message.contains("changed after it was applied"))
            #expect(try await pool.query("SELECT count(*) AS n FROM schema_migrations")[0].decode(Int.self, "n") == 1)
        }
    }

    @Test("a failing migration rolls back whole and is not recorded")
    func failingMigrationRollsBack() async throws {
        try await TestDatabase.withScratchDatabase { url in
            let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: url, poolSize: 1))
            defer { pool.shutdown() }
            let broken = [Migrator.Migration(version: 1, name: "0001_broken.sql", sql: "CREATE TABLE half (id int); SELECT no_such_function();")]
            await #expect(throws: PostgresError.self) { try await Migrator(migrations: broken).run(on: pool, logger: logger) }
            let gone = try await pool.query("SELECT to_regclass('half') IS NULL AS gone")[0].decode(Bool.self, "gone")
            let recorded = try await pool.query("SELECT count(*) AS n FROM schema_migrations")[0].decode(Int.self, "n")
            #expect(gone)
            #expect(recorded == 0)
        }
    }

    @Test("a run cancelled while it holds the migration lock releases it at once and puts the session's timeouts back")
    func cancelledRunReleasesLock() async throws {
        try await TestDatabase.withScratchDatabase { url in
            // Advisory locks belong to a database: every session here is on the scratch one.
            let pool = TestDatabase.pool(size: 1, statementTimeoutMilliseconds: 4000, url: url)
            let observer = TestDatabase.pool(size: 1, url: url)
            let holder = TestDatabase.pool(size: 1, url: url)
            let other = TestDatabase.pool(size: 1, url: url)
            defer {
                for pool in [pool, observer, holder, other] { pool.shutdown() }
            }
            let blocker = Int.random(in: 2_000_001...3_000_000)
            _ = try await holder.query("SELECT pg_advisory_lock(\(blocker))")
            let signal = try await StartSignal.arm(pool, observer: observer)
            // The migration starts (releasing the signal), then waits for a lock the test holds.
            let waiting = Migrator.Migration(
                version: 1, name: "0001_waits.sql", sql: "SELECT pg_advisory_unlock(\(signal.key)); SELECT pg_advisory_xact_lock(\(blocker));"
            )
            let run = Task { try await Migrator(migrations: [waiting]).run(on: pool, logger: logger) }
            try await signal.started()
            run.cancel()
            await #expect(throws: CancellationError.self) { try await run.value }
            // Another instance takes the migration lock at once: the cancelled run left it on no pooled connection.
            #expect(try await other.query("SELECT pg_try_advisory_lock(\(Migrator.lockKey)) AS locked")[0].decode(Bool.self, "locked"))
            // The pool's connection has its own statement timeout again, not the migration's 0 (nor the server default).
            #expect(try await pool.query("SELECT current_setting('statement_timeout') AS t")[0].decode(String.self, "t") == "4s")
            _ = try await holder.query("SELECT pg_advisory_unlock(\(blocker))")
        }
    }

    @Test("the repository's sql/ directory is found from any working directory and its files are well named")
    func locatesRepositoryMigrations() throws {
        let sql = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("sql")
        let migrator = try Migrator(directory: sql)
        #expect(migrator.migrations.first?.name == "0001_extensions.sql")
        let versions = migrator.migrations.map(\.version)
        #expect(versions == versions.sorted() && Set(versions).count == versions.count)
        let found = Migrator.locateDirectory(environment: ["WEATHERBOARD_SQL_DIR": sql.path])
        #expect(found?.path == sql.path)
    }

    @Test("an online migration builds its indexes CONCURRENTLY, statement by statement, and finishes one a failed run left invalid")
    func online() async throws {
        try await TestDatabase.withScratchDatabase { url in
            let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: url, poolSize: 1))
            defer { pool.shutdown() }
            let table = Migrator.Migration(version: 1, name: "0001_t.sql", sql: "CREATE TABLE t (x int); INSERT INTO t VALUES (1), (1), (2);")
            let index = Migrator.Migration(
                version: 2, name: "0002_t_index.sql",
                sql: """
                    -- migrate: online
                    -- a comment; and a statement over two lines
                    CREATE INDEX CONCURRENTLY IF NOT EXISTS t_x_idx
                        ON t (x);
                    CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS t_x_key ON t (x);
                    """
            )
            // The unique build fails on the duplicate and leaves an INVALID t_x_key behind; nothing is recorded.
            await #expect(throws: PostgresError.self) { try await Migrator(migrations: [table, index]).run(on: pool, logger: logger) }
            let valid = "SELECT c.relname AS name, i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname LIKE 't_x_%' ORDER BY 1"
            #expect(try await pool.query(SQLQuery(unsafeSQL: valid)).map { "\(try $0.decode(String.self, "name")) \(try $0.decode(Bool.self, "valid"))" } == ["t_x_idx true", "t_x_key false"])
            #expect(try await pool.query("SELECT count(*) AS n FROM schema_migrations")[0].decode(Int.self, "n") == 1)
            // The data mended, the next run drops the invalid index and builds it again.
            _ = try await pool.execute("DELETE FROM t WHERE ctid = (SELECT max(ctid) FROM t WHERE x = 1)")
            let outcome = try await Migrator(migrations: [table, index]).run(on: pool, logger: logger)
            #expect(outcome.applied == ["0002_t_index.sql"])
            #expect(try await pool.query(SQLQuery(unsafeSQL: valid)).map { "\(try $0.decode(String.self, "name")) \(try $0.decode(Bool.self, "valid"))" } == ["t_x_idx true", "t_x_key true"])
            // A function body is no plain statement: such a file is refused before anything runs.
            let body = Migrator.Migration(version: 3, name: "0003_f.sql", sql: "-- migrate: online\nCREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$;\n")
            await #expect(throws: PostgresError.self) { try await Migrator(migrations: [table, index, body]).run(on: pool, logger: logger) }
        }
    }

    @Test("the repository's online migrations hold only statements the online runner can split")
    func repositoryOnlineMigrations() throws {
        let sql = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("sql")
        for migration in try Migrator(directory: sql).migrations where migration.isOnline {
            let statements = try migration.onlineStatements()
            #expect(!statements.isEmpty)
            // Each index such a file creates is found by name (a failed run's invalid one is dropped and rebuilt); a
            // file may also drop or rename indexes.
            for statement in statements where statement.hasPrefix("CREATE") && statement.contains("INDEX") {
                #expect(Migrator.Migration.concurrentIndexName(statement) != nil, "\(migration.name): \(statement)")
            }
        }
    }

    @Test("instances migrating at once while one builds an index CONCURRENTLY all finish: no deadlock, applied once")
    func onlineWhileOthersWait() async throws {
        try await TestDatabase.withScratchDatabase { url in
            let holder = PostgresPool(configuration: PostgresConfiguration(conninfo: url, poolSize: 1))
            defer { holder.shutdown() }
            let blocker = 0x6f6e_6c69_6e65  // held by the test until every run is in
            _ = try await holder.query("SELECT pg_advisory_lock(\(blocker))")
            let migrations = [
                Migrator.Migration(version: 1, name: "0001_t.sql", sql: "CREATE TABLE t (x int);"),
                Migrator.Migration(
                    version: 2, name: "0002_t_index.sql",
                    sql: "-- migrate: online\nSELECT pg_advisory_lock(\(blocker));\nSELECT pg_advisory_unlock(\(blocker));\nCREATE INDEX CONCURRENTLY IF NOT EXISTS t_x_idx ON t (x);\n"
                ),
            ]
            let runs = (0..<3).map { _ in
                Task {
                    let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: url, poolSize: 1, statementTimeoutMilliseconds: 60_000))
                    defer { pool.shutdown() }
                    return try await Migrator(migrations: migrations).run(on: pool, logger: Logger(label: "test"))
                }
            }
            // One run holds the migration lock and waits for the blocker; the other two are at the migration lock (its key
            // a bind parameter: trying it, or before, queued on it).
            let waiting = SQLQuery(
                unsafeSQL: "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND (query LIKE '%try_advisory_lock(%' OR query LIKE '%advisory_lock($1)%')"
            )
            while try await holder.query(waiting)[0].decode(Int.self, "n") < 2 {}
            _ = try await holder.query("SELECT pg_advisory_unlock(\(blocker))")
            var applied = 0
            for run in runs { applied += try await run.value.applied.count }
            #expect(applied == 2)
            #expect(try await holder.query("SELECT count(*) AS n FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 't_x_idx' AND i.indisvalid")[0].decode(Int.self, "n") == 1)
        }
    }
}
