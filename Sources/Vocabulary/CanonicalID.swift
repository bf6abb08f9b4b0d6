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
