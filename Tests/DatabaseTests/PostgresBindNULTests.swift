import Database
import Foundation
import Testing

/// libpq takes text parameters as C strings; a NUL inside one must be refused, never cut off (issue #13).
@Suite("Bind parameters holding NUL")
struct PostgresBindNULTests {
    @Test("a text parameter with a NUL is refused before it reaches libpq; the connection stays usable")
    func refusedNotTruncated() async throws {
        let pool = TestDatabase.pool(size: 1)
        defer { pool.shutdown() }
        for value in ["name\u{0}anything", "\u{0}", "tail\u{0}"] {
            await #expect {
                _ = try await pool.query("SELECT \(value)::text AS t")
            } throws: { error in
                (error as? PostgresError)?.isNULInText == true
            }
        }
        // Inside text[] too.
        await #expect {
            _ = try await pool.query("SELECT \(["ok", "b\u{0}ad"]) AS t")
        } throws: { error in
            (error as? PostgresError)?.isNULInText == true
        }
        // Inside a transaction the refusal rolls it back like any statement error.
        await #expect(throws: PostgresError.self) {
            try await pool.transaction { connection in
                _ = try connection.query("SELECT \("x\u{0}y") AS t")
            }
        }
        let row = try await pool.query("SELECT \("name") AS t")[0]
        #expect(try row.decode(String.self, "t") == "name")
    }

    @Test("the check itself: only text holding U+0000 is refused")
    func check() throws {
        try PostgresBind.requireCStrings([PostgresBind(type: PostgresType.text, text: "ünïcødé ✓"), PostgresBind(type: PostgresType.text, text: nil)])
        #expect(throws: PostgresError.self) { try PostgresBind.requireCStrings([PostgresBind(type: PostgresType.text, text: "a\u{0}")]) }
    }
}
