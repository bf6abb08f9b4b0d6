/// The rows of one result, copied out of libpq's `PGresult` on the connection's thread.
public struct PostgresRows: Sendable, RandomAccessCollection {
    public let columns: PostgresColumns
    let values: [String?]
    /// Rows changed by an INSERT, UPDATE or DELETE (`PQcmdTuples`).
    public let affectedRows: Int

    init(columns: PostgresColumns, values: [String?], affectedRows: Int) {
        self.columns = columns
        self.values = values
        self.affectedRows = affectedRows
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { columns.count == 0 ? 0 : values.count / columns.count }

    public subscript(position: Int) -> PostgresRow {
        let width = columns.count
        return PostgresRow(columns: columns, values: values[(position * width)..<((position + 1) * width)])
    }
}

/// Column names and types of a result, shared by its rows.
public final class PostgresColumns: Sendable {
    public let names: [String]
    public let types: [UInt32]
    let indexByName: [String: Int]

    init(names: [String], types: [UInt32]) {
        self.names = names
        self.types = types
        // Only wide results get a dictionary; `index(of:)` scans narrow ones (every result builds this).
        var index: [String: Int] = [:]
        if names.count > Self.scanLimit {
            for (i, name) in names.enumerated() where index[name] == nil {
                index[name] = i
            }
        }
        self.indexByName = index
    }

    public var count: Int { names.count }

    private static let scanLimit = 32

    /// The first column with this name. Results are narrow and names short (compared inline, without
    /// hashing), so a scan beats the dictionary up to a few dozen columns.
    public func index(of name: String) -> Int? {
        if names.count <= Self.scanLimit { return names.firstIndex(of: name) }
        return indexByName[name]
    }
}

/// One row. Decode columns by position or name:
///
///     let id = try row.decode(Int.self, "id")
///     let title = try row.decode(String?.self, "title")
public struct PostgresRow: Sendable {
    public let columns: PostgresColumns
    let values: ArraySlice<String?>

    public func decode<T: PostgresDecodable>(_: T.Type, _ column: String) throws -> T {
        try decode(T.self, at: index(of: column))
    }

    public func decode<T: PostgresDecodable>(_: T?.Type, _ column: String) throws -> T? {
        try decode(T?.self, at: index(of: column))
    }

    public func decode<T: PostgresDecodable>(_: T.Type, at index: Int) throws -> T {
        guard index < columns.count else {
            throw PostgresError(kind: .decoding, message: "column index \(index) out of range (\(columns.count) columns)")
        }
        guard let text = values[values.startIndex + index] else {
            throw PostgresError(kind: .decoding, message: "column '\(columns.names[index])' is NULL; decode it as Optional")
        }
        do {
            return try T(postgresText: text, type: columns.types[index])
        } catch var error as PostgresError {
            error.message = "column '\(columns.names[index])': " + error.message
            throw error
        }
    }

    public func decode<T: PostgresDecodable>(_: T?.Type, at index: Int) throws -> T? {
        guard index < columns.count else {
            throw PostgresError(kind: .decoding, message: "column index \(index) out of range (\(columns.count) columns)")
        }
        guard values[values.startIndex + index] != nil else { return nil }
        return try decode(T.self, at: index)
    }

    public func isNull(_ column: String) throws -> Bool {
        values[values.startIndex + (try index(of: column))] == nil
    }

    private func index(of column: String) throws -> Int {
        guard let index = columns.index(of: column) else {
            throw PostgresError(kind: .decoding, message: "no column named '\(column)' (have \(columns.names.joined(separator: ", ")))")
        }
        return index
    }
}
