import Database
import Vocabulary

extension SQLQuery {
    /// The most rows a page statement ever reads: the largest page and one more, to tell whether a next page exists.
    static let pageFetchCap = PageLimit.maximum + 1

    /// This ordered query, limited to `limit` rows, written so that its generic plan knows a page is small.
    ///
    /// The server's statements run as generic plans (`PostgresConnection`), and in a generic plan PostgreSQL
    /// estimates `LIMIT $n` as a tenth of its input: 100,000 rows for a page of a 1M-post table, 1M at 10M. Such
    /// estimates pick hash joins over whole tables and pass `jit_above_cost`, so a 0.2 ms page paid ~170 ms of JIT
    /// compilation at 1M posts. A constant inner `LIMIT` (`pageFetchCap`) bounds every estimate above it by the
    /// largest page, whatever the table size; the outer `LIMIT $n` keeps one statement for every page size and stops
    /// reading after `limit` rows. The subquery's order passes through: nothing between the two limits reorders.
    func page(limit: Int) -> SQLQuery {
        assert(limit <= Self.pageFetchCap, "a page is at most PageLimit.maximum + 1 rows")
        var sql: SQLQuery = "SELECT * FROM ("
        sql.append(self)
        sql.append(" LIMIT \(raw: String(Self.pageFetchCap))) capped LIMIT \(min(limit, Self.pageFetchCap))" as SQLQuery)
        return sql
    }
}
