import Foundation

/// PostgreSQL type OIDs used for parameters and result columns.
public enum PostgresType {
    public static let bool: UInt32 = 16
    public static let bytea: UInt32 = 17
    public static let int8: UInt32 = 20
    public static let int2: UInt32 = 21
    public static let int4: UInt32 = 23
    public static let text: UInt32 = 25
    public static let json: UInt32 = 114
    public static let float4: UInt32 = 700
    public static let float8: UInt32 = 701
    public static let varchar: UInt32 = 1043
    public static let timestamp: UInt32 = 1114
    public static let timestamptz: UInt32 = 1184
    public static let numeric: UInt32 = 1700
    public static let uuid: UInt32 = 2950
    public static let jsonb: UInt32 = 3802
    public static let textArray: UInt32 = 1009
    public static let int8Array: UInt32 = 1016
}

/// One bind parameter in PostgreSQL's text format, with its type so the server never has to guess.
public struct PostgresBind: Sendable, Equatable {
    public var type: UInt32
    public var text: String?

    public init(type: UInt32, text: String?) {
        self.type = type
        self.text = text
    }
}

extension PostgresBind {
    /// libpq takes every text-format parameter as a NUL-terminated C string (`PQexecPrepared`'s
    /// `paramValues`, copied with `strdup`), so a value holding a NUL would silently lose everything after
    /// it: `name\u{0}anything` would be looked up as `name`. Such a parameter is refused, never truncated.
    /// (The HTTP layer rejects NUL in requests long before this; this is the last line of defence.)
    /// The error carries SQLSTATE 22021 (`character_not_in_repertoire`), what PostgreSQL answers for a NUL
    /// in text.
    public static func requireCStrings(_ binds: [PostgresBind]) throws {
        for (index, bind) in binds.enumerated() {
            if let text = bind.text, text.utf8.contains(0) {
                throw PostgresError(
                    kind: .server,
                    message: "parameter $\(index + 1) contains a NUL character (U+0000), which a text parameter cannot carry",
                    sqlState: PostgresError.nulInText
                )
            }
        }
    }
}

extension PostgresError {
    /// SQLSTATE of a text parameter refused for holding a NUL (see `PostgresBind.requireCStrings`).
    public static let nulInText = "22021"

    /// True when a statement was refused because a text parameter held a NUL.
    public var isNULInText: Bool { sqlState == Self.nulInText }
}

/// A Swift value that can be sent as a bind parameter.
public protocol PostgresEncodable: Sendable {
    static var postgresType: UInt32 { get }
    var postgresText: String { get }
}

extension PostgresEncodable {
    public var postgresBind: PostgresBind { PostgresBind(type: Self.postgresType, text: postgresText) }
}

/// A Swift value that can be read from a result column in text format.
public protocol PostgresDecodable: Sendable {
    /// Throws `PostgresError(kind: .decoding)` when `text` is not a valid value of this type.
    init(postgresText text: String, type: UInt32) throws
    /// The same from the cell's UTF-8 bytes; types that can skip building a `String` implement it.
    init(postgresBytes bytes: UnsafeRawBufferPointer, type: UInt32) throws
}

extension PostgresDecodable {
    public init(postgresBytes bytes: UnsafeRawBufferPointer, type: UInt32) throws {
        try self.init(postgresText: String(decoding: bytes, as: UTF8.self), type: type)
    }
}

/// A decimal integer from ASCII bytes, nil unless the whole buffer is one (with an optional sign).
func parseInteger(_ bytes: UnsafeRawBufferPointer) -> Int64? {
    var i = 0
    var negative = false
    if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
        negative = first == UInt8(ascii: "-")
        i = 1
    }
    guard i < bytes.count, bytes.count - i <= 19 else { return nil }
    var value: Int64 = 0
    while i < bytes.count {
        let digit = bytes[i] &- 48
        guard digit < 10 else { return nil }
        let (times10, o1) = value.multipliedReportingOverflow(by: 10)
        let (sum, o2) = negative ? times10.subtractingReportingOverflow(Int64(digit)) : times10.addingReportingOverflow(Int64(digit))
        guard !o1, !o2 else { return nil }
        value = sum
        i += 1
    }
    return value
}

extension String: PostgresEncodable, PostgresDecodable {
    public static var postgresType: UInt32 { PostgresType.text }
    public var postgresText: String { self }
    public init(postgresText text: String, type: UInt32) throws { self = text }
    public init(postgresBytes bytes: UnsafeRawBufferPointer, type: UInt32) throws { self = String(decoding: bytes, as: UTF8.self) }
}

extension Int: PostgresEncodable, PostgresDecodable {
    public static var postgresType: UInt32 { PostgresType.int8 }
    public var postgresText: String { String(self) }
    public init(postgresText text: String, type: UInt32) throws {
        guard let value = Int(text) else { throw PostgresError.mismatch(text, type: type, as: "Int") }
        self = value
    }
    public init(postgresBytes bytes: UnsafeRawBufferPointer, type: UInt32) throws {
        guard let wide = parseInteger(bytes), let value = Int(exactly: wide) else {
            throw PostgresError.mismatch(String(decoding: bytes, as: UTF8.self), type: type, as: "Int")
        }
        self = value
    }
}

extension Int64: PostgresEncodable, PostgresDecodable {
    public static var postgresType: UInt32 { PostgresType.int8 }
    public var postgresText: String { String(self) }
    public init(postgresText text: String, type: UInt32) throws {
        guard let value = Int64(text) else { throw PostgresError.mismatch(text, type: type, as: "Int64") }
        self = value
    }
    public init(postgresBytes bytes: UnsafeRawBufferPointer, type: UInt32) throws {
        guard let wide = parseInteger(bytes), let value = Int64(exactly: wide) else {
            throw PostgresError.mismatch(String(decoding: bytes, as: UTF8.self), type: type, as: "Int64")
        }
        self = value
    }
}

extension Int32: PostgresEncodable, PostgresDecodable {
    public static var postgresType: UInt32 { PostgresType.int4 }
    public var postgresText: String { String(self) }
    public init(postgresText text: String, type: UInt32) throws {
        guard let value = Int32(text) else { throw PostgresError.mismatch(text, type: type, as: "Int32") }
        self = value
    }
    public init(postgresBytes bytes: UnsafeRawBufferPointer, type: UInt32) throws {
        guard let wide = parseInteger(bytes), let value = Int32(exactly: wide) else {
            throw PostgresError.mismatch(String(decoding: bytes, as: UTF8.self), type: type, as: "Int32")
        }
        self = value
    }
}

extension Bool: PostgresEncodable, PostgresDecodable {
    public static var postgresType: UInt32 { PostgresType.bool }
    public var postgresText: String { self ? "t" : "f" }
    public init(postgresText text: String, type: UInt32) throws {
        switch text {
        case "t", "true": self = true
        case "f", "false": self = false
        default: throw PostgresError.mismatch(text, type: type, as: "Bool")
        }
    }
    public init(postgresBytes bytes: UnsafeRawBufferPointer, type: UInt32) throws {
        if bytes.count == 1, bytes[0] == UInt8(ascii: "t") {
            self = true
        } else if bytes.count == 1, bytes[0] == UInt8(ascii: "f") {
            self = false
        } else {
            try self.init(postgresText: String(decoding: bytes, as: UTF8.self), type: type)
        }
    }
}

extension Double: PostgresEncodable, PostgresDecodable {
    public static var postgresType: UInt32 { PostgresType.float8 }
    public var postgresText: String {
        if isNaN { return "NaN" }
        if isInfinite { return self > 0 ? "Infinity" : "-Infinity" }
        return "\(self)"
    }
    public init(postgresText text: String, type: UInt32) throws {
        switch text {
        case "NaN": self = .nan
        case "Infinity": self = .infinity
        case "-Infinity": self = -.infinity
        default:
            guard let value = Double(text) else { throw PostgresError.mismatch(text, type: type, as: "Double") }
            self = value
        }
    }
}

extension Date: PostgresEncodable, PostgresDecodable {
    public static var postgresType: UInt32 { PostgresType.timestamptz }
    /// ISO 8601 in UTC with microseconds, which PostgreSQL reads exactly.
    public var postgresText: String { PostgresTimestamp.format(self) }
    public init(postgresText text: String, type: UInt32) throws {
        guard let date = PostgresTimestamp.parse(text) else {
            throw PostgresError.mismatch(text, type: type, as: "Date")
        }
        self = date
    }
    public init(postgresBytes bytes: UnsafeRawBufferPointer, type: UInt32) throws {
        guard let date = PostgresTimestamp.parse(bytes: bytes) else {
            throw PostgresError.mismatch(String(decoding: bytes, as: UTF8.self), type: type, as: "Date")
        }
        self = date
    }
}

/// Raw bytes, sent and read as `bytea` in hex format.
public struct PostgresBytes: PostgresEncodable, PostgresDecodable, Equatable {
    public var bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public static var postgresType: UInt32 { PostgresType.bytea }
    public var postgresText: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8]("\\x".utf8)
        out.reserveCapacity(2 + bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
    public init(postgresText text: String, type: UInt32) throws {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else {
            throw PostgresError.mismatch(text, type: type, as: "bytea")
        }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            case 65...70: return c - 55
            default: return nil
            }
        }
        var result: [UInt8] = []
        result.reserveCapacity((utf8.count - 2) / 2)
        var i = 2
        while i < utf8.count {
            guard let hi = nibble(utf8[i]), let lo = nibble(utf8[i + 1]) else {
                throw PostgresError.mismatch(text, type: type, as: "bytea")
            }
            result.append(hi << 4 | lo)
            i += 2
        }
        self.bytes = result
    }
}

/// A `text[]` parameter or column.
extension Array: PostgresEncodable where Element == String {
    public static var postgresType: UInt32 { PostgresType.textArray }
    public var postgresText: String {
        var out = "{"
        for (i, element) in enumerated() {
            if i > 0 { out += "," }
            out += "\""
            for ch in element.unicodeScalars {
                if ch == "\"" || ch == "\\" { out += "\\" }
                out.unicodeScalars.append(ch)
            }
            out += "\""
        }
        return out + "}"
    }
}

extension PostgresError {
    static func mismatch(_ text: String, type: UInt32, as swiftType: String) -> PostgresError {
        let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
        return PostgresError(kind: .decoding, message: "cannot decode '\(shown)' (type oid \(type)) as \(swiftType)")
    }
}
