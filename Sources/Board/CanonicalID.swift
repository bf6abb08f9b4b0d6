/// The one parser for ids that clients send back (CONTRACT §1): an id is exactly the string the server
/// gave, the decimal form of a positive 64-bit integer with no sign, no leading zero and nothing around it.
/// `+5`, `05`, `5 `, `-5`, `٥` and `99999999999999999999` name nothing.
public enum CanonicalID {
    /// The id `text` names, or nil when it is not an id the server could have given (`^[1-9][0-9]*$`, fits Int64).
    public static func parse(_ text: some StringProtocol) -> Int? {
        let utf8 = text.utf8
        guard let first = utf8.first, first >= UInt8(ascii: "1"), first <= UInt8(ascii: "9"), utf8.count <= 19 else { return nil }
        var value: Int64 = 0
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return Int(exactly: value)
    }
}

/// Page sizes (CONTRACT §1): default 20; ASCII digits only; 0 is refused; any value above 100, however
/// many digits it has, is 100. A sign, a space, anything else, or nothing at all is refused.
public enum PageLimit {
    public static let defaultValue = 20
    public static let maximum = 100

    /// The page size `raw` asks for (the default when absent); `badRequest` when it is not a positive number.
    public static func parse(_ raw: (some StringProtocol)?) throws -> Int {
        guard let raw else { return defaultValue }
        let utf8 = raw.utf8
        guard !utf8.isEmpty, utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw BoardError.badRequest("limit must be a positive integer")
        }
        let significant = utf8.drop(while: { $0 == UInt8(ascii: "0") })
        guard !significant.isEmpty else { throw BoardError.badRequest("limit must be a positive integer") }
        // Four or more significant digits is past the maximum however long it is: no overflow to worry about.
        guard significant.count <= 3 else { return maximum }
        let value = significant.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return min(value, maximum)
    }
}
