import Database
import Testing

@Suite("SQLQuery")
struct SQLQueryTests {
    @Test("interpolated values become numbered bind parameters, never SQL text")
    func interpolation() {
        let name = "x'); DROP TABLE accounts; --"
        let limit = 20
        let query: SQLQuery = "SELECT * FROM t WHERE name = \(name) LIMIT \(limit)"
        #expect(query.sql == "SELECT * FROM t WHERE name = $1 LIMIT $2")
        #expect(query.binds.map(\.text) == [name, "20"])
    }

    @Test("appending renumbers the placeholders of the appended part")
    func appending() {
        var query: SQLQuery = "SELECT * FROM t WHERE a = \(1)"
        query.append(" AND b = \(2) AND c = \("three")" as SQLQuery)
        #expect(query.sql == "SELECT * FROM t WHERE a = $1 AND b = $2 AND c = $3")
        #expect(query.binds.map(\.text) == ["1", "2", "three"])
    }
}
