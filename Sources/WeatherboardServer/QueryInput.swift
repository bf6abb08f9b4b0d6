import Board
import Hummingbird
import Vocabulary

/// A request's query string, parsed once per request, and the contract's rule for each kind of query value: a bad
/// value is 400 `bad_request`. Every route reads its query values here, so all of them decode one way (`formDecoded`).
struct QueryInput {
    /// Each name's first value.
    let values: [String: String]

    init(_ request: Request) {
        self.init(query: request.uri.query)
    }

    init(query: String?) {
        var values: [String: String] = [:]
        for (name, value) in Self.formDecoded(query ?? "") where values[name] == nil {
            values[name] = value
        }
        self.values = values
    }

    func get(_ name: String) -> String? {
        values[name]
    }

    /// The name–value pairs of a query string as HTML forms encode them (CONTRACT §1; WHATWG URL's
    /// `application/x-www-form-urlencoded` parser): `+` is a space and `%2B` a plus, in names and values alike,
    /// because forms, Python's `urlencode` and many HTTP stacks send `+` for a space; `Request.uri.queryParameters`
    /// keeps `+`. A `%` not followed by two hex digits stays as it is, and bytes that are not UTF-8 read as U+FFFD,
    /// so a malformed value reaches its parameter's own check (400), never a 500. A NUL never gets here
    /// (`InputTextMiddleware` refuses `%00` first).
    static func formDecoded(_ query: String) -> [(name: String, value: String)] {
        Array(query.utf8).split(separator: UInt8(ascii: "&")).map { field in
            let equals = field.firstIndex(of: UInt8(ascii: "="))
            let name = field[..<(equals ?? field.endIndex)]
            let value = equals.map { field[field.index(after: $0)...] } ?? field[field.endIndex...]
            return (percentDecoded(name), percentDecoded(value))
        }
    }

    private static func percentDecoded(_ encoded: ArraySlice<UInt8>) -> String {
        let bytes = Array(encoded)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "+") {
                decoded.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), i + 2 < bytes.count, let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) {
                decoded.append(high << 4 | low)
                i += 2
            } else {
                decoded.append(byte)
            }
            i += 1
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The page size: default 20, any all-digit value above 100 (however large) clamped to 100; 0, a sign or
    /// anything but digits is 400 (`PageLimit`).
    func pageLimit() throws -> Int {
        guard let limit = PageLimit.parse(get("limit")) else { throw APIError.badRequest("limit must be a positive integer") }
        return limit
    }

    /// The decoded `cursor`, if any; garbage is 400.
    func cursor() throws -> Int? {
        guard let raw = get("cursor"), !raw.isEmpty else { return nil }
        guard let id = Cursor.decode(raw) else { throw APIError.badRequest("cursor is not valid; use nextCursor from a previous page") }
        return id
    }

    /// `sort` (default `new`, or the route's own) and the `cursor` read in that order (CONTRACT §9): a cursor of
    /// another order, or anything the server could not have written, is 400.
    func sortedCursor(default defaultSort: PostSort = .new) throws -> (sort: PostSort, before: Int?, after: PostSort.Position?) {
        let sort = try value("sort", as: PostSort.self) ?? defaultSort
        guard let raw = get("cursor"), !raw.isEmpty else { return (sort, nil, nil) }
        switch sort.decode(cursor: raw) {
        case .id(let id): return (sort, id, nil)
        case .position(let position): return (sort, nil, position)
        case nil: throw APIError.badRequest("cursor is not valid for sort=\(sort.rawValue); use nextCursor from a previous page of the same sort")
        }
    }

    /// An optional value that must be one of a closed set.
    func value<T: RawRepresentable>(_ name: String, as type: T.Type, allowed: (T) -> Bool = { _ in true }) throws -> T? where T.RawValue == String {
        guard let raw = get(name) else { return nil }
        guard let value = T(rawValue: raw), allowed(value) else {
            throw APIError.badRequest("\(name) '\(raw)' is not a known value")
        }
        return value
    }

    /// An optional id (`regionId=`, `authorId=`): exactly an id the server gave (`CanonicalID`); anything else
    /// (`+5`, `05`, `5 `) is 400.
    func id(_ name: String) throws -> Int? {
        guard let raw = get(name) else { return nil }
        guard let id = CanonicalID.parse(raw) else { throw APIError.badRequest("\(name) is not a valid id") }
        return id
    }

    /// `include=` values (comma-separated); anything but the allowed ones is 400.
    func includes(allowed: Set<String>) throws -> Set<String> {
        guard let raw = get("include") else { return [] }
        let values = Set(raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        guard !values.isEmpty, values.isSubset(of: allowed) else {
            throw APIError.badRequest("include must be one of: \(allowed.sorted().joined(separator: ", "))")
        }
        return values
    }

    /// A required coordinate (`lat=`, `lon=`) in `range`.
    func coordinate(_ name: String, range: ClosedRange<Double>) throws -> Double {
        guard let raw = get(name), !raw.isEmpty else { throw APIError.badRequest("\(name) is required") }
        guard let value = Double(raw), value.isFinite, range.contains(value) else {
            throw APIError.badRequest("\(name) must be a number in \(Int(range.lowerBound))...\(Int(range.upperBound))")
        }
        return value
    }

    /// `units=metric|imperial`, metric when absent.
    func units() throws -> Units {
        guard let units = Units(query: get("units")) else { throw APIError.badRequest("units must be metric or imperial") }
        return units
    }
}
