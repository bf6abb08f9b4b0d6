import PropertyBased
import Synchronization

/// Shared generators for the parsers that take outside bytes.
enum Gens {
    /// Any byte.
    static let byte = Gen<UInt8>.value(in: 0...255)

    /// Short byte strings.
    static let bytes = byte.array(of: 0...48)

    /// Any Unicode scalar (surrogate code points skipped: they are not scalars).
    static let scalar = Gen<UInt32>.value(in: 0...0x10FFFF).compactMap { Unicode.Scalar($0) }

    /// Arbitrary strings: mostly ASCII, some Latin-1, some anything.
    static let text = Generator<String, Shrink.None<String>> { rng in
        let length = Int.random(in: 0...40, using: &rng)
        var out = String.UnicodeScalarView()
        for _ in 0..<length {
            let value: UInt32
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<6: value = UInt32.random(in: 0...127, using: &rng)
            case 6..<8: value = UInt32.random(in: 0...255, using: &rng)
            default: value = UInt32.random(in: 0...0x10FFFF, using: &rng)
            }
            out.append(Unicode.Scalar(value) ?? "\u{FFFD}")
        }
        return String(out)
    }

    /// Strings drawn from an alphabet (with a little of anything else mixed in).
    static func string(from alphabet: String, length: ClosedRange<Int>) -> Generator<String, Shrink.None<String>> {
        let characters = Array(alphabet)
        return Generator { rng in
            let count = Int.random(in: length, using: &rng)
            var out = ""
            for _ in 0..<count {
                if Int.random(in: 0..<50, using: &rng) == 0 {
                    out.append(Character(Unicode.Scalar(UInt8.random(in: 0...255, using: &rng))))
                } else if let c = characters.randomElement(using: &rng) {
                    out.append(c)
                }
            }
            return out
        }
    }

    static let base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_="

    /// Decimal numbers as they might appear in a tampered stored string: in range, zero, negative, huge,
    /// past Int.max, with signs, leading zeros or spaces, or not numbers at all.
    static func numberText(_ rng: inout any SeededRandomNumberGenerator, inRange range: ClosedRange<Int>) -> String {
        switch Int.random(in: 0..<16, using: &rng) {
        case 0: return "0"
        case 1: return "-\(Int.random(in: 1...Int.max, using: &rng))"
        case 2: return "\(Int.max)"
        case 3: return "\(Int.random(in: 1 << 20...Int.max, using: &rng))"
        case 4: return "9223372036854775808"
        case 5: return String(repeating: "9", count: Int.random(in: 19...60, using: &rng))
        case 6: return "-9223372036854775808"
        case 7: return "+\(Int.random(in: range, using: &rng))"
        case 8: return "0\(Int.random(in: range, using: &rng))"
        case 9: return " \(Int.random(in: range, using: &rng))"
        case 10: return ""
        case 11: return "1e3"
        case 12:
            let (above, overflow) = range.upperBound.addingReportingOverflow(Int.random(in: 1...1000, using: &rng))
            return overflow ? "\(range.upperBound)0" : "\(above)"
        case 13: return "\(Int.random(in: 33...64, using: &rng))"
        case 14: return "0x10"
        default: return "\(Int.random(in: range, using: &rng))"
        }
    }

    static func randomBase64(_ rng: inout any SeededRandomNumberGenerator, bytes: ClosedRange<Int>) -> String {
        var raw: [UInt8] = []
        for _ in 0..<Int.random(in: bytes, using: &rng) { raw.append(UInt8.random(in: 0...255, using: &rng)) }
        return encodeBase64(raw)
    }

    /// A reference encoder, independent of the one under test.
    static func encodeBase64(_ bytes: [UInt8], urlSafe: Bool = false) -> String {
        let alphabet = Array(urlSafe
            ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
            : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var bits: UInt32 = 0
        var count = 0
        var out = ""
        for b in bytes {
            bits = bits << 8 | UInt32(b)
            count += 8
            while count >= 6 {
                count -= 6
                out.append(alphabet[Int(bits >> UInt32(count) & 63)])
            }
            bits &= (1 << UInt32(count)) - 1
        }
        if count > 0 { out.append(alphabet[Int(bits << UInt32(6 - count) & 63)]) }
        return out
    }
}

/// Counts the generated inputs a parser accepted. A property of the form "canonical or nil" holds for a parser that
/// accepts nothing, so a check of that form also requires a share of its inputs to parse.
final class ParseTally: Sendable {
    private let parsed = Mutex(0)

    func record(_ accepted: Bool) {
        if accepted { parsed.withLock { $0 += 1 } }
    }

    var count: Int { parsed.withLock { $0 } }
}
