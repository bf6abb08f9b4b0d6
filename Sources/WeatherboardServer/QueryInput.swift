import Board
import Hummingbird
import Vocabulary

/// A request's query string, parsed once per request (Hummingbird parses `uri.queryParameters` anew on every
/// access), and the contract's rule for each kind of query value: a bad value is 400 `bad_request`.
struct QueryInput {
    let values: Parameters

    init(_ request: Request) {
        values = request.uri.queryParameters
    }

    func get(_ name: String) -> String? {
        values.get(name)
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
