import Vocabulary

extension Units {
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
