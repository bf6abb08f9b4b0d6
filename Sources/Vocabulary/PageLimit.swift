/// Page sizes (CONTRACT §1): default 20; ASCII digits only; 0 is refused; any value above 100, however
/// many digits it has, is 100. A sign, a space, anything else, or nothing at all is refused.
public enum PageLimit {
    public static let defaultValue = 20
    public static let maximum = 100

    /// The page size `raw` asks for (the default when absent); nil when it is not a positive number (a 400).
    public static func parse(_ raw: (some StringProtocol)?) -> Int? {
        guard let raw else { return defaultValue }
        let utf8 = raw.utf8
        guard !utf8.isEmpty, utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let significant = utf8.drop(while: { $0 == UInt8(ascii: "0") })
        guard !significant.isEmpty else { return nil }
        // Four or more significant digits is past the maximum however long it is: no overflow to worry about.
        guard significant.count <= 3 else { return maximum }
        let value = significant.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        return min(value, maximum)
    }
}
