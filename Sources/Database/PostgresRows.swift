/// The rows of one result, copied out of libpq's `PGresult` on the connection's thread: every value's
/// text in one byte buffer, so a page of rows costs two allocations, and a value becomes a `String` (or an
/// `Int`, a `Date`…) only when it is decoded.
public struct PostgresRows: Sendable, RandomAccessCollection {
    public let columns: PostgresColumns
    let storage: PostgresCells
    /// Rows changed by an INSERT, UPDATE or DELETE (`PQcmdTuples`).
    public let affectedRows: Int

    init(columns: PostgresColumns, storage: PostgresCells, affectedRows: Int) {
        self.columns = columns
        self.storage = storage
        self.affectedRows = affectedRows
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { columns.count == 0 ? 0 : storage.cells.count / columns.count }

    public subscript(position: Int) -> PostgresRow {
        PostgresRow(columns: columns, storage: storage, firstCell: position * columns.count)
    }
}

/// The values of a result: UTF-8 text back to back, and where each cell's text starts and how long it is
/// (length -1: NULL).
struct PostgresCells: Sendable {
    var bytes: [UInt8] = []
    var cells: [Cell] = []

    struct Cell: Sendable {
        var offset: Int32
        var length: Int32
    }

    func withValue<R>(_ cell: Int, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        let cell = cells[cell]
        if cell.length < 0 { return try body(nil) }
        return try bytes.withUnsafeBytes { all in
            try body(UnsafeRawBufferPointer(rebasing: all[Int(cell.offset)..<Int(cell.offset) + Int(cell.length)]))
        }
    }

    func isNull(_ cell: Int) -> Bool { cells[cell].length < 0 }
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
    let storage: PostgresCells
    let firstCell: Int

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
        return try storage.withValue(firstCell + index) { bytes in
            guard let bytes else {
                throw PostgresError(kind: .decoding, message: "column '\(columns.names[index])' is NULL; decode it as Optional")
            }
            do {
                return try T(postgresBytes: bytes, type: columns.types[index])
            } catch var error as PostgresError {
                error.message = "column '\(columns.names[index])': " + error.message
                throw error
            }
        }
    }

    public func decode<T: PostgresDecodable>(_: T?.Type, at index: Int) throws -> T? {
        guard index < columns.count else {
            throw PostgresError(kind: .decoding, message: "column index \(index) out of range (\(columns.count) columns)")
        }
        guard !storage.isNull(firstCell + index) else { return nil }
        return try decode(T.self, at: index)
    }

    public func isNull(_ column: String) throws -> Bool {
        storage.isNull(firstCell + (try index(of: column)))
    }

    private func index(of column: String) throws -> Int {
        guard let index = columns.index(of: column) else {
            throw PostgresError(kind: .decoding, message: "no column named '\(column)' (have \(columns.names.joined(separator: ", ")))")
        }
        return index
    }
}
