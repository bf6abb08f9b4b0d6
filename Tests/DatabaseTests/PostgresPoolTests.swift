@testable import Database
import Foundation
import Testing

@Suite("PostgreSQL pool")
struct PostgresPoolTests {
    @Test("200 concurrent tasks on a pool of 4 all finish, with the right answers")
    func manyTasksOnSmallPool() async throws {
        let pool = TestDatabase.pool(size: 4)
        defer { pool.shutdown() }
        let sum = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<200 {
                group.addTask {
                    try await pool.query("SELECT \(i)::int8 + 1 AS n")[0].decode(Int.self, "n")
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(sum == (1...200).reduce(0, +))
        #expect(pool.usage.waiting == 0)
    }

    @Test("a connection killed with pg_terminate_backend is replaced; the next call succeeds")
    func recoversFromTerminatedBackend() async throws {
        let pool = TestDatabase.pool(size: 1)
        let killer = TestDatabase.pool(size: 1)
        defer {
            pool.shutdown()
            killer.shutdown()
        }
        let pid = try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid")
        // With a timeout, pg_terminate_backend returns once the backend has really gone, so the test doesn't race the server.
        let killed = try await killer.query("SELECT pg_terminate_backend(\(pid)::int4, 30000) AS ok")[0].decode(Bool.self, "ok")
        #expect(killed)
        let newPID = try await pool.query("SELECT pg_backend_pid() AS pid")[0].decode(Int.self, "pid")
        #expect(newPID != pid)
    }

    @Test("a thrown error inside a transaction leaves no row behind")
    func rollbackOnThrow() async throws {
        let pool = TestDatabase.pool(size: 2)
        defer { pool.shutdown() }
        let table = "tx_test_\(UInt32.random(in: 0...UInt32.max))"
        try await pool.withConnection { try $0.simpleQuery("CREATE TABLE \(table) (v text)") }
        struct Boom: Error {}
        await #expect(throws: Boom.self) {
            try await pool.transaction { connection in
                try connection.execute(SQLQuery(unsafeSQL: "INSERT INTO \(table) (v) VALUES ($1)", binds: ["kept?".postgresBind]))
                throw Boom()
            }
        }
        let count = try await pool.query(SQLQuery(unsafeSQL: "SELECT count(*) AS n FROM \(table)"))[0].decode(Int.self, "n")
        #expect(count == 0)
        // And a transaction that returns commits.
        try await pool.transaction { connection in
            try connection.execute(SQLQuery(unsafeSQL: "INSERT INTO \(table) (v) VALUES ($1)", binds: ["kept".postgresBind]))
        }
        let after = try await pool.query(SQLQuery(unsafeSQL: "SELECT count(*) AS n FROM \(table)"))[0].decode(Int.self, "n")
        #expect(after == 1)
        try await pool.withConnection { try $0.simpleQuery("DROP TABLE \(table)") }
    }

    @Test(
        "parameters round-trip unchanged",
        arguments: [
            "서울 날씨 맑음 ☀️ 오늘은 냉면!",
            "emoji 🌧️🌈👩‍👩‍👧 and ZWJ",
            #"quotes ' " `; DROP TABLE posts; --"#,
            #"backslashes \ \\ \x00 \n literal"#,
            String(repeating: "가", count: 2000),
            "",
            "line\nbreak\ttab",
        ]
    )
    func textRoundTrip(_ text: String) async throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        let row = try await pool.query("SELECT \(text)::text AS t, length(\(text)::text) AS n")[0]
        #expect(try row.decode(String.self, "t") == text)
        #expect(try row.decode(Int.self, "n") == text.unicodeScalars.count)
    }

    @Test("typed parameters and columns: integers, booleans, doubles, timestamps, bytes, arrays, nulls")
    func typedRoundTrip() async throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        let date = Date(timeIntervalSince1970: 1_795_000_000.123456)
        let bytes = PostgresBytes([0, 1, 127, 128, 255])
        let none: String? = nil
        let row = try await pool.query(
            """
            SELECT \(Int.max) AS i, \(Int32(-7)) AS i4, \(true) AS b, \(-2.5) AS d, \(date) AS ts,
                   \(bytes) AS bytes, \(none) AS nothing, \(["a", "b\"c", "다"]) AS arr, cardinality(\(["x", "y"])) AS card
            """
        )[0]
        #expect(try row.decode(Int.self, "i") == Int.max)
        #expect(try row.decode(Int32.self, "i4") == -7)
        #expect(try row.decode(Bool.self, "b") == true)
        #expect(try row.decode(Double.self, "d") == -2.5)
        let decoded = try row.decode(Date.self, "ts")
        #expect(abs(decoded.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001)
        #expect(try row.decode(PostgresBytes.self, "bytes") == bytes)
        #expect(try row.decode(String?.self, "nothing") == nil)
        #expect(try row.decode(Int.self, "card") == 2)
    }

    @Test("integers decode at their limits; a value too wide for the Swift type is a decoding error")
    func integerLimits() async throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        let row = try await pool.query(
            "SELECT (-9223372036854775808)::int8 AS lo, 9223372036854775807::int8 AS hi, (-2147483648)::int4 AS lo4, 0::int8 AS zero, 3000000000::int8 AS wide"
        )[0]
        #expect(try row.decode(Int.self, "lo") == Int.min)
        #expect(try row.decode(Int64.self, "hi") == Int64.max)
        #expect(try row.decode(Int32.self, "lo4") == Int32.min)
        #expect(try row.decode(Int.self, "zero") == 0)
        let error = #expect(throws: PostgresError.self) { try row.decode(Int32.self, "wide") }
        #expect(error?.kind == .decoding)
        #expect(error?.message.contains("wide") == true)
    }

    @Test("decoding the wrong type is a clear error naming the column")
    func typeMismatch() async throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        let row = try await pool.query("SELECT 'abc'::text AS word, NULL::int8 AS missing")[0]
        let error = try #require(throws: PostgresError.self) { try row.decode(Int.self, "word") }
        #expect(error.kind == .decoding)
        #expect(error.message.contains("word"))
        let nullError = try #require(throws: PostgresError.self) { try row.decode(Int.self, "missing") }
        #expect(nullError.message.contains("NULL"))
        #expect(throws: PostgresError.self) { try row.decode(Int.self, "no_such_column") }
    }

    @Test("a unique violation carries SQLSTATE 23505 and the constraint name")
    func uniqueViolation() async throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        let error = try await #require(throws: PostgresError.self) {
            try await pool.withConnection { connection in
                try connection.simpleQuery("CREATE TEMP TABLE u (k text CONSTRAINT u_k_key UNIQUE)")
                try connection.execute("INSERT INTO u (k) VALUES (\("same"))")
                try connection.execute("INSERT INTO u (k) VALUES (\("same"))")
            }
        }
        #expect(error.isUniqueViolation)
        #expect(error.constraint == "u_k_key")
        #expect(!error.isUnavailable)
    }

    @Test("the statement timeout fires and counts as 'database unavailable'")
    func statementTimeout() async throws {
        let pool = TestDatabase.pool(size: 1, statementTimeoutMilliseconds: 150)
        defer { pool.shutdown() }
        let error = try await #require(throws: PostgresError.self) {
            try await pool.query("SELECT pg_sleep(30)")
        }
        #expect(error.isStatementTimeout)
        #expect(error.isUnavailable)
        // The connection is still good afterwards.
        #expect(try await pool.query("SELECT 1 AS one")[0].decode(Int.self, "one") == 1)
    }

    @Test("callers waiting for a busy pool time out instead of hanging")
    func acquireTimeout() async throws {
        let pool = TestDatabase.pool(size: 1, acquireTimeoutMilliseconds: 100)
        defer { pool.shutdown() }
        let lock = try await HeldAdvisoryLock.acquire()
        defer { lock.close() }
        let held = await occupy(pool) { [key = lock.key] in try $0.query("SELECT pg_advisory_lock(\(key))") }
        let error = try await #require(throws: PostgresError.self) { try await pool.query("SELECT 1") }
        #expect(error.kind == .poolTimeout)
        #expect(error.isUnavailable)
        try await lock.release()
        _ = try await held.value
    }

    @Test("an unreachable database fails fast with a connection error")
    func unreachable() async throws {
        let pool = PostgresPool(configuration: PostgresConfiguration(conninfo: "postgresql://nobody@127.0.0.1:1/none", poolSize: 1))
        defer { pool.shutdown() }
        let error = try await #require(throws: PostgresError.self) { try await pool.query("SELECT 1") }
        #expect(error.kind == .connection)
        #expect(error.isUnavailable)
    }
}

@Suite("PostgreSQL pool deadlines")
struct PostgresPoolDeadlineTests {
    @Test("a short deadline expires on time even behind queued jobs with long ones")
    func shortDeadlineBehindLongOnes() async throws {
        let pool = TestDatabase.pool(size: 1, acquireTimeoutMilliseconds: 60_000)
        defer { pool.shutdown() }
        let lock = try await HeldAdvisoryLock.acquire()
        defer { lock.close() }
        let busy = await occupy(pool) { [key = lock.key] in try $0.query("SELECT pg_advisory_xact_lock(\(key))") }
        let queued = Task { try await pool.query("SELECT 1") }  // 60 s deadline, first in line
        #expect(await pool.reached { $0.waiting == 1 })
        let error = try await #require(throws: PostgresError.self) { try await pool.query("SELECT 1", timeoutMilliseconds: 200) }
        #expect(error.kind == .poolTimeout)
        // It expired while the long job ahead of it still waited: its deadline did not wait for theirs.
        #expect(pool.usage.waiting == 1)
        try await lock.release()
        _ = try await busy.value
        _ = try await queued.value
    }
}
