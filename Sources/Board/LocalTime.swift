/// A wall-clock time of day, to the minute (`"HH:MM"`, 24 h): the briefing's time and the quiet hours' ends, read in
/// each device's time zone (CONTRACT §14).
public struct LocalTime: Sendable, Hashable, Comparable {
    /// Minutes after midnight, 0...1439.
    public let minutes: Int

    public init?(minutes: Int) {
        guard (0..<1440).contains(minutes) else { return nil }
        self.minutes = minutes
    }

    /// Exactly two digits, a colon and two digits: hours 00–23, minutes 00–59. Anything else is nil (`7:00`,
    /// `24:00`, `07:60`, `07:00:00`, full-width digits).
    public init?(parsing text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":") else { return nil }
        let digits = [bytes[0], bytes[1], bytes[3], bytes[4]]
        guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        let values = digits.map { Int($0 - UInt8(ascii: "0")) }
        let hours = values[0] * 10 + values[1], minutes = values[2] * 10 + values[3]
        guard hours < 24, minutes < 60 else { return nil }
        self.minutes = hours * 60 + minutes
    }

    /// `"HH:MM"`.
    public var text: String {
        let hours = minutes / 60, minutes = minutes % 60
        return (hours < 10 ? "0" : "") + String(hours) + ":" + (minutes < 10 ? "0" : "") + String(minutes)
    }

    public static func < (lhs: LocalTime, rhs: LocalTime) -> Bool { lhs.minutes < rhs.minutes }
}
