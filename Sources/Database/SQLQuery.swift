/// A parameterized SQL statement. Interpolated values become `$n` bind parameters, never SQL text:
///
///     let q: SQLQuery = "SELECT id FROM posts WHERE author_id = \(authorID) AND status = \(status)"
///     // sql: "SELECT id FROM posts WHERE author_id = $1 AND status = $2", binds: [authorID, status]
///
/// Fixed fragments chosen by code (never by input) are spliced with `\(raw: "…")`, the one way raw text enters a
/// statement, so a reader sees every such place; a fragment that is itself a query is interpolated with its binds.
public struct SQLQuery: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    public private(set) var sql: String
    public private(set) var binds: [PostgresBind]

    public init(stringLiteral value: String) {
        self.sql = value
        self.binds = []
    }

    public init(stringInterpolation: StringInterpolation) {
        self.sql = stringInterpolation.sql
        self.binds = stringInterpolation.binds
    }

    public init(unsafeSQL sql: String, binds: [PostgresBind] = []) {
        self.sql = sql
        self.binds = binds
    }

    public var description: String { sql }

    /// Appends a bind parameter and returns its placeholder (`$n`), for queries assembled piece by piece.
    public mutating func bind(_ value: some PostgresEncodable) -> String {
        binds.append(value.postgresBind)
        return "$\(binds.count)"
    }

    /// Appends another query, renumbering its placeholders after ours.
    public mutating func append(_ other: SQLQuery) {
        // Nothing to shift when either side has no placeholders: the common case of a query wrapped in another.
        if other.binds.isEmpty || binds.isEmpty {
            sql += other.sql
            binds += other.binds
            return
        }
        let offset = binds.count
        sql += Self.renumber(other.sql, by: offset)
        binds += other.binds
    }

    public static func + (lhs: SQLQuery, rhs: SQLQuery) -> SQLQuery {
        var result = lhs
        result.append(rhs)
        return result
    }

    /// Shifts `$n` placeholders by `offset`. Only placeholders this type wrote exist in `sql`, since
    /// values never become SQL text.
    static func renumber(_ sql: String, by offset: Int) -> String {
        var sql = sql
        return sql.withUTF8 { utf8 in
            var out: [UInt8] = []
            out.reserveCapacity(utf8.count + 16)
            var i = 0
            while i < utf8.count {
                let byte = utf8[i]
                i += 1
                out.append(byte)
                guard byte == UInt8(ascii: "$") else { continue }
                var n = 0, digits = 0
                while i < utf8.count, utf8[i] >= UInt8(ascii: "0"), utf8[i] <= UInt8(ascii: "9") {
                    n = n * 10 + Int(utf8[i] - UInt8(ascii: "0"))
                    digits += 1
                    i += 1
                }
                if digits > 0 { out.append(contentsOf: String(n + offset).utf8) }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var sql: String = ""
        var binds: [PostgresBind] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + interpolationCount * 3)
            binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        public mutating func appendInterpolation(_ value: some PostgresEncodable) {
            binds.append(value.postgresBind)
            sql += "$\(binds.count)"
        }

        public mutating func appendInterpolation<T: PostgresEncodable>(_ value: T?) {
            binds.append(value.map(\.postgresBind) ?? PostgresBind(type: T.postgresType, text: nil))
            sql += "$\(binds.count)"
        }

        /// A query fragment, its binds renumbered after the ones before it.
        public mutating func appendInterpolation(_ fragment: SQLQuery) {
            sql += binds.isEmpty || fragment.binds.isEmpty ? fragment.sql : SQLQuery.renumber(fragment.sql, by: binds.count)
            binds += fragment.binds
        }

        /// A fixed SQL fragment chosen by code. Never pass user input here.
        public mutating func appendInterpolation(raw fragment: String) {
            sql += fragment
        }
    }
}
