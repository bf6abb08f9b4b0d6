import Foundation
import PropertyBased
import Testing
import Vocabulary

/// `RFC3339` (Vocabulary): what the server writes it reads back, and client text is a date or nil, never a trap.
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

    @Test func arbitraryTextIsADateOrNil() async {
        await propertyCheck(count: 400, input: Gens.text) { text in
            _ = RFC3339.parse(text)
            _ = RFC3339.parse("2026-11-22T09:30:00" + text)
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
