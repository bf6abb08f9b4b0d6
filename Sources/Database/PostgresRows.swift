/// The rows of one result, copied out of libpq's `PGresult` on the connection's thread: every value's
/// text in one byte buffer, so a page of rows costs two allocations, and a value becomes a `String` (or an
/// `Int`, a `Date`…) only when it is decoded.
public struct PostgresRows: Sendable, RandomAccessCollection {
    public let columns: PostgresColumns
    @usableFromInline let storage: PostgresCells
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
///
/// Decoding is `@inlinable`, so each caller's `decode(Int.self, …)` is specialized where it is written: a page
/// of 20 posts decodes ~400 cells, and the generic path (metadata look-ups, a closure context per cell) was
/// a tenth of a list request.
@usableFromInline
struct PostgresCells: Sendable {
    @usableFromInline var bytes: [UInt8] = []
    @usableFromInline var cells: [Cell] = []

    @usableFromInline
    struct Cell: Sendable {
        @usableFromInline var offset: Int32
        @usableFromInline var length: Int32

        init(offset: Int32, length: Int32) {
            self.offset = offset
            self.length = length
        }
    }

    init() {}

    @inlinable
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
    @usableFromInline let storage: PostgresCells
    @usableFromInline let firstCell: Int

    public func decode<T: PostgresDecodable>(_: T.Type, _ column: String) throws -> T {
        try decode(T.self, at: index(of: column))
    }

    public func decode<T: PostgresDecodable>(_: T?.Type, _ column: String) throws -> T? {
        try decode(T?.self, at: index(of: column))
    }

    @inlinable
    public func decode<T: PostgresDecodable>(_: T.Type, at index: Int) throws -> T {
        guard index >= 0, index < columns.count else { throw outOfRange(index) }
        let cell = storage.cells[firstCell + index]
        guard cell.length >= 0 else { throw isNullError(index) }
        let start = Int(cell.offset), end = Int(cell.offset) + Int(cell.length)
        do {
            return try storage.bytes.withUnsafeBytes { all in
                try T(postgresBytes: UnsafeRawBufferPointer(rebasing: all[start..<end]), type: columns.types[index])
            }
        } catch let error as PostgresError {
            throw naming(error, index)
        }
    }

    @inlinable
    public func decode<T: PostgresDecodable>(_: T?.Type, at index: Int) throws -> T? {
        guard index >= 0, index < columns.count else { throw outOfRange(index) }
        guard !storage.isNull(firstCell + index) else { return nil }
        return try decode(T.self, at: index)
    }

    @usableFromInline
    func outOfRange(_ index: Int) -> PostgresError {
        PostgresError(kind: .decoding, message: "column index \(index) out of range (\(columns.count) columns)")
    }

    @usableFromInline
    func isNullError(_ index: Int) -> PostgresError {
        PostgresError(kind: .decoding, message: "column '\(columns.names[index])' is NULL; decode it as Optional")
    }

    @usableFromInline
    func naming(_ error: PostgresError, _ index: Int) -> PostgresError {
        var error = error
        error.message = "column '\(columns.names[index])': " + error.message
        return error
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
