import Database

/// The planner workarounds the statements use, each named once; docs/PLANS.md explains forced generic plans and why
/// each of these exists. Every helper writes SQL that means the same rows as the plain form.
enum PlanTrick {
    /// `column = value`, written as a range: a generic plan then does not treat the column as a constant, so only an
    /// index that leads with the column yields an order that starts with it, and the walk stops at the value's end.
    static func equal(_ column: String, _ value: some PostgresEncodable) -> SQLQuery {
        "\(raw: column) >= \(value) AND \(raw: column) <= \(value)"
    }

    /// `equal` of a value written in SQL (the reader's account: `Visibility.account`).
    static func equal(_ column: String, _ value: SQLQuery) -> SQLQuery {
        "\(raw: column) >= \(value) AND \(raw: column) <= \(value)"
    }

    /// `column` as an expression no index matches (`+ 0` on a number, `|| ''` on text): a walk that must go through
    /// another index cannot be planned through this column's.
    static func unindexed(_ column: String, text: Bool) -> String {
        text ? "\(column) || ''" : "\(column) + 0"
    }

    /// `subquery` behind `OFFSET 0`: the planner neither flattens it into the outer query nor starts a join from it,
    /// so a LATERAL lookup stays one probe per outer row, and a result used twice is computed once.
    static func fenced(_ subquery: SQLQuery) -> SQLQuery {
        "\(subquery) OFFSET 0"
    }

    /// `fenced` for a fixed subquery written by code.
    static func fenced(_ subquery: String) -> String {
        "\(subquery) OFFSET 0"
    }
}
