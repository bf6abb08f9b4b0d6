import Foundation

/// How post text is cleaned and measured (CONTRACT §4): NFC, `\r\n` → `\n`, trimmed; lengths in Unicode
/// code points; control characters other than newline and tab rejected.
public enum TextRules {
    public static func normalize(_ raw: String) -> String {
        raw.precomposedStringWithCanonicalMapping
            .replacingOccurrences(of: "\r\n", with: "\n")
            .replacingOccurrences(of: "\r", with: "\n")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Normalizes and checks a text field; throws `invalidField` naming `field`.
    public static func validate(_ raw: String, field: String, range: ClosedRange<Int>) throws -> String {
        let text = normalize(raw)
        if let bad = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control && $0 != "\n" && $0 != "\t" }) {
            throw BoardError.invalidField(field: field, message: "contains a control character (U+\(String(bad.value, radix: 16, uppercase: true)))")
        }
        let length = text.unicodeScalars.count
        if length < range.lowerBound {
            throw BoardError.invalidField(field: field, message: range.lowerBound == 1 ? "must not be empty" : "must be at least \(range.lowerBound) characters")
        }
        if length > range.upperBound {
            throw BoardError.invalidField(field: field, message: "must be at most \(range.upperBound) characters (got \(length))")
        }
        return text
    }
}
