/// `units=metric` (°C, m/s; the default) or `units=imperial` (°F, mph).
public enum Units: String, Codable, Sendable, CaseIterable {
    case metric, imperial

    /// Parses a query value; nil for anything else (the HTTP layer answers 400).
    public init?(query: String?) {
        guard let query else {
            self = .metric
            return
        }
        guard let units = Units(rawValue: query) else { return nil }
        self = units
    }

    func temperature(fromCelsius celsius: Double) -> Double {
        switch self {
        case .metric: return Self.round(celsius)
        case .imperial: return Self.round(celsius * 9 / 5 + 32)
        }
    }

    func speed(fromMetresPerSecond speed: Double) -> Double {
        switch self {
        case .metric: return Self.round(speed)
        case .imperial: return Self.round(speed * 3600 / 1609.344)
        }
    }

    /// One decimal, like the providers report.
    static func round(_ value: Double) -> Double { (value * 10).rounded() / 10 }
}
