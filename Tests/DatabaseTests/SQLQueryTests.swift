import Database
import Foundation
import Testing

@Suite("SQLQuery")
struct SQLQueryTests {
    @Test("a date bind of any value is text PostgreSQL reads: past 64-bit microseconds or not finite it is ±infinity, never a trap")
    func absurdDates() {
        func text(_ seconds: Double) -> String? {
            let query: SQLQuery = "SELECT \(Date(timeIntervalSince1970: seconds))"
            return query.binds.first?.text
        }
        #expect(text(0) == "1970-01-01T00:00:00.000000Z")
        #expect(text(-1.5) == "1969-12-31T23:59:58.500000Z")
        #expect(text(1e300) == "infinity")
        #expect(text(-1e300) == "-infinity")
        #expect(text(.infinity) == "infinity")
        #expect(text(-.infinity) == "-infinity")
        #expect(text(9.3e12) == "infinity")
        #expect(text(.nan) == "infinity")
    }

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
