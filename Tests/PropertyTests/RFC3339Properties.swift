import Foundation
import PropertyBased
import Testing
import Vocabulary

/// `RFC3339` (Vocabulary): what the server writes it reads back, and client text is the instant it names or nil,
/// as an independent reading of RFC 3339 says.
@Suite struct RFC3339Properties {
    @Test func formatThenParseRoundTrips() async {
        // 0000-01-01T00:00:00Z … 9999-12-31T23:59:59Z, whole seconds (the wire format's precision).
        await propertyCheck(count: 400, input: Gen.int(in: -62_167_219_200...253_402_300_799)) { seconds in
            let date = Date(timeIntervalSince1970: Double(seconds))
            let text = RFC3339.format(date)
            #expect(RFC3339.parse(text) == date, "\(text)")
        }
    }

    @Test func agreesWithFoundation() async {
        let foundation = ISO8601DateFormatter()
        await propertyCheck(count: 300, input: Gen.int(in: -2_208_988_800...4_102_444_800)) { seconds in
            let date = Date(timeIntervalSince1970: Double(seconds))
            #expect(RFC3339.format(date) == foundation.string(from: date))
        }
    }

    /// Valid timestamps in every form the grammar allows (any offset, a fraction of any length, `t`/`z` in either
    /// case) are the instant they name.
    @Test func everyFormIsItsInstant() async {
        await propertyCheck(count: 400, input: RFC3339Text.valid) { sample in
            guard let parsed = RFC3339.parse(sample.text) else {
                Issue.record("\(sample.text) did not parse")
                return
            }
            #expect(RFC3339Text.same(parsed.timeIntervalSince1970, sample.instant), "\(sample.text): \(parsed.timeIntervalSince1970) ≠ \(sample.instant)")
        }
    }

    /// Valid timestamps with a few characters replaced, removed or added: the parser agrees with an independent
    /// reading of RFC 3339 §5.6 (and its day-of-month rule), a date where the text is one and nil where it is not.
    @Test func mutatedTextIsItsInstantOrNil() async {
        await propertyCheck(count: 1500, input: RFC3339Text.mutated) { text in
            Self.expectAgreement(text)
        }
    }

    /// Every field at and just past its bounds (days 28–32 of any month of leap and common years, hour 24, minute
    /// and second 60 and 61, offsets to 24:60): the parser and the reference agree on which exist and when.
    @Test func boundaryTextIsItsInstantOrNil() async {
        await propertyCheck(count: 2000, input: RFC3339Text.boundary) { text in
            Self.expectAgreement(text)
        }
    }

    @Test func arbitraryTextIsItsInstantOrNil() async {
        await propertyCheck(count: 400, input: Gens.text) { text in
            Self.expectAgreement(text)
            Self.expectAgreement("2026-11-22T09:30:00" + text)
        }
    }

    static func expectAgreement(_ text: String) {
        let parsed = RFC3339.parse(text)?.timeIntervalSince1970
        let expected = RFC3339Text.reference(text)
        switch (parsed, expected) {
        case (nil, nil):
            break
        case (let parsed?, let expected?):
            #expect(RFC3339Text.same(parsed, expected), "\(text.debugDescription): \(parsed) ≠ \(expected)")
        default:
            Issue.record("\(text.debugDescription): parsed \(String(describing: parsed)), expected \(String(describing: expected))")
        }
    }

    @Test func forms() {
        let t = Date(timeIntervalSince1970: 1_795_340_000)  // 2026-11-22T09:33:20Z
        #expect(RFC3339.parse("2026-11-22T09:33:20Z") == t)
        #expect(RFC3339.parse("2026-11-22t09:33:20z") == t)
        #expect(RFC3339.parse("2026-11-22T18:33:20+09:00") == t)
        #expect(RFC3339.parse("2026-11-21T23:33:20-10:00") == t)
        #expect(RFC3339.parse("2026-11-22T09:33:20.250Z") == t.addingTimeInterval(0.25))
        #expect(RFC3339.parse("2000-02-29T00:00:00Z") == Date(timeIntervalSince1970: 951_782_400))
        for bad in ["2026-11-22T09:33:20", "2026-11-22 09:33:20Z", "2026-02-30T00:00:00Z", "2027-02-29T00:00:00Z",
                    "2026-13-01T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T09:33:20.Z", "2026-11-22T09:33:20+0900",
                    "2026-11-22T09:33:20+09", "+2026-11-22T09:33:20Z", "2026-11-22T09:33:20Z ", "２026-11-22T09:33:20Z", ""] {
            #expect(RFC3339.parse(bad) == nil, "\(bad)")
        }
    }
}

/// Timestamps for the properties, and a reading of RFC 3339 written apart from `RFC3339.parse` (its own calendar
/// arithmetic: days before the year, then before the month, with the Gregorian leap rule).
enum RFC3339Text {
    struct Sample: CustomStringConvertible {
        var text: String
        /// Seconds since 1970 of the instant `text` names.
        var instant: Double
        var description: String { text }
    }

    /// The same instant, to within a microsecond and the rounding of a `Date` (which counts from 2001) far from now.
    static func same(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 1e-6 + abs(b) * 1e-15 }

    static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysInMonth(_ year: Int64, _ month: Int64) -> Int64 {
        [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][Int(month - 1)]
    }

    /// Days from 1970-01-01 to a date of years 0…9999.
    static func days(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }
        let before = year - 1
        let daysBeforeYear = 365 * before + floorDiv(before, 4) - floorDiv(before, 100) + floorDiv(before, 400)
        var daysBeforeMonth: Int64 = 0
        for m in 1..<month { daysBeforeMonth += daysInMonth(year, m) }
        return daysBeforeYear + daysBeforeMonth + day - 1 - 719_162  // 0001-01-01 is 719,162 days before 1970-01-01
    }

    /// The instant an RFC 3339 `date-time` names (§5.6: `full-date "T" full-time`, `T` and `Z` in either case,
    /// `time-secfrac` of one digit or more, a leap second `60`), or nil.
    static func reference(_ text: String) -> Double? {
        let scalars = Array(text.unicodeScalars)
        var i = 0
        func number(_ count: Int) -> Int64? {
            guard i + count <= scalars.count else { return nil }
            var value: Int64 = 0
            for scalar in scalars[i..<i + count] {
                guard ("0"..."9").contains(scalar) else { return nil }
                value = value * 10 + Int64(scalar.value - 48)
            }
            i += count
            return value
        }
        func literal(_ options: Set<Unicode.Scalar>) -> Unicode.Scalar? {
            guard i < scalars.count, options.contains(scalars[i]) else { return nil }
            i += 1
            return scalars[i - 1]
        }
        guard let year = number(4), literal(["-"]) != nil, let month = number(2), literal(["-"]) != nil, let day = number(2),
            literal(["T", "t"]) != nil, let hour = number(2), literal([":"]) != nil, let minute = number(2), literal([":"]) != nil,
            let second = number(2)
        else { return nil }
        var fraction = 0.0
        if literal(["."]) != nil {
            var scale = 0.1
            var digits = 0
            while i < scalars.count, ("0"..."9").contains(scalars[i]) {
                fraction += Double(scalars[i].value - 48) * scale
                scale /= 10
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
        }
        var offset: Int64 = 0
        if literal(["Z", "z"]) == nil {
            guard let sign = literal(["+", "-"]), let offsetHour = number(2), literal([":"]) != nil, let offsetMinute = number(2),
                offsetHour <= 23, offsetMinute <= 59
            else { return nil }
            offset = (offsetHour * 60 + offsetMinute) * 60 * (sign == "+" ? 1 : -1)
        }
        guard i == scalars.count, (1...12).contains(month), day >= 1, day <= daysInMonth(year, month), hour <= 23, minute <= 59,
            second <= 60
        else { return nil }
        return Double(days(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
    }

    static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// A valid timestamp: any date of years 0…9999 (day 29–31 only where the month has it), a leap second now and
    /// then, any offset, a fraction of 0–12 digits, either case.
    static let valid = Generator<Sample, Shrink.None<Sample>> { rng in sample(&rng) }

    static func sample(_ rng: inout any SeededRandomNumberGenerator) -> Sample {
        let year = Int64.random(in: 0...9999, using: &rng)
        let month = Int64.random(in: 1...12, using: &rng)
        let day = Int64.random(in: 1...daysInMonth(year, month), using: &rng)
        let hour = Int64.random(in: 0...23, using: &rng)
        let minute = Int64.random(in: 0...59, using: &rng)
        let second = Int64.random(in: 0..<20, using: &rng) == 0 ? 60 : Int64.random(in: 0...59, using: &rng)
        var text = "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))\(Bool.random(using: &rng) ? "T" : "t")"
            + "\(digits(hour, 2)):\(digits(minute, 2)):\(digits(second, 2))"
        var fraction = 0.0
        let fractionDigits = Int.random(in: 0...2, using: &rng) == 0 ? 0 : Int.random(in: 1...12, using: &rng)
        if fractionDigits > 0 {
            text += "."
            var scale = 0.1
            for _ in 0..<fractionDigits {
                let digit = Int.random(in: 0...9, using: &rng)
                text += String(digit)
                fraction += Double(digit) * scale
                scale /= 10
            }
        }
        var offset: Int64 = 0
        switch Int.random(in: 0..<3, using: &rng) {
        case 0:
            text += Bool.random(using: &rng) ? "Z" : "z"
        default:
            let offsetHour = Int64.random(in: 0...23, using: &rng)
            let offsetMinute = Int64.random(in: 0...59, using: &rng)
            let positive = Bool.random(using: &rng)
            text += "\(positive ? "+" : "-")\(digits(offsetHour, 2)):\(digits(offsetMinute, 2))"
            offset = (offsetHour * 3600 + offsetMinute * 60) * (positive ? 1 : -1)
        }
        let instant = Double(days(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return Sample(text: text, instant: instant)
    }

    /// Fields at and past their bounds; years that are leap, common, and the century rules' exceptions.
    static let boundary = Generator<String, Shrink.None<String>> { rng in
        let years: [Int64] = [0, 1, 4, 100, 400, 1900, 1996, 2000, 2023, 2024, 2100, 9999]
        let year = Bool.random(using: &rng) ? years.randomElement(using: &rng) ?? 2000 : Int64.random(in: 0...9999, using: &rng)
        let month = Int64.random(in: 0...13, using: &rng)
        let day = Bool.random(using: &rng) ? Int64.random(in: 28...32, using: &rng) : Int64.random(in: 0...32, using: &rng)
        let hour = Int64.random(in: 20...24, using: &rng)
        let minute = Int64.random(in: 58...60, using: &rng)
        let second = Int64.random(in: 58...61, using: &rng)
        let zone = Bool.random(using: &rng)
            ? "Z" : "\(Bool.random(using: &rng) ? "+" : "-")\(digits(Int64.random(in: 22...24, using: &rng), 2)):\(digits(Int64.random(in: 58...60, using: &rng), 2))"
        return "\(digits(year, 4))-\(digits(month, 2))-\(digits(day, 2))T\(digits(hour, 2)):\(digits(minute, 2)):\(digits(second, 2))\(zone)"
    }

    /// Characters a mutation puts in: the grammar's own, and a few it refuses (a space, a full-width digit, a NUL,
    /// a letter with an accent).
    static let alphabet: [Character] = Array("0123456789012345-:+.TtZz ２\u{0}é")

    /// A valid timestamp with 0–3 characters replaced, removed, added or repeated.
    static let mutated = Generator<String, Shrink.None<String>> { rng in
        var text = Array(sample(&rng).text)
        for _ in 0..<Int.random(in: 0...3, using: &rng) {
            let at = Int.random(in: 0..<max(1, text.count), using: &rng)
            let character = alphabet.randomElement(using: &rng) ?? "0"
            switch Int.random(in: 0..<4, using: &rng) {
            case 0 where at < text.count: text[at] = character
            case 1 where at < text.count: text.remove(at: at)
            case 2 where at < text.count: text.insert(text[at], at: at)
            default: text.insert(character, at: min(at, text.count))
            }
        }
        return String(text)
    }
}
