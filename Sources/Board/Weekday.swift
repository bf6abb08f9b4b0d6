/// A day of the week as the settings name it (CONTRACT §14: `mon` … `sun`), and its bit in a stored set.
public enum Weekday: String, Sendable, CaseIterable {
    case mon, tue, wed, thu, fri, sat, sun

    /// Monday = 1, … Sunday = 64 (`notification_settings.briefing_days`).
    var bit: Int { 1 << Weekday.allCases.firstIndex(of: self)! }

    /// The days of a stored set, Monday first.
    static func days(of bits: Int) -> [Weekday] { allCases.filter { bits & $0.bit != 0 } }

    /// The stored set of `days`.
    static func bits(of days: [Weekday]) -> Int { days.reduce(0) { $0 | $1.bit } }
}
