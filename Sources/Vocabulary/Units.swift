/// `units=metric` (°C, m/s; the default) or `units=imperial` (°F, mph).
public enum Units: String, Codable, Sendable, CaseIterable {
    case metric, imperial

    /// Parses a query value (`metric` when absent); nil for anything else (the HTTP layer answers 400).
    public init?(query: String?) {
        guard let query else {
            self = .metric
            return
        }
        guard let units = Units(rawValue: query) else { return nil }
        self = units
    }
}
