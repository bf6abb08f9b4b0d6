/// A value read back from the database that the code does not know (a migration or a hand edit the code has
/// not caught up with). It fails the request loudly (a logged 500, counted in `http_requests_total`) instead of
/// turning into some default.
public struct UnknownStoredValue: Error, CustomStringConvertible {
    public let column: String
    public let value: String

    public var description: String { "unknown value '\(value.prefix(40))' in column \(column)" }

    /// The enum case stored as `raw` in `column`, or this error.
    static func decode<T: RawRepresentable>(_: T.Type, _ raw: String, column: String) throws -> T where T.RawValue == String {
        guard let value = T(rawValue: raw) else { throw UnknownStoredValue(column: column, value: raw) }
        return value
    }
}
