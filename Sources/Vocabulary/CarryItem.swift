/// What to take along (CONTRACT §9's `carry`): decided by the weather type, the UV index and the feels-like band.
public enum CarryItem: String, Codable, Sendable, CaseIterable {
    case umbrella, sunscreen, hat, gloves, water

    /// UV index from which sunscreen is advised (inclusive).
    public static let sunscreenUV = 3.0
    /// UV index from which a hat is advised (inclusive).
    public static let hatUV = 6.0

    /// The items for this weather, in `allCases` order. A missing (or non-finite) UV index advises neither
    /// sunscreen nor a hat.
    public static func items(weatherType: WeatherType, uvIndex: Double?, band: FeelsLikeBand?) -> [CarryItem] {
        let uv = uvIndex.flatMap { $0.isFinite ? $0 : nil }
        return allCases.filter { item in
            switch item {
            case .umbrella: [.showerRain, .rain, .thunderStorm, .snow].contains(weatherType)
            case .sunscreen: uv.map { $0 >= sunscreenUV } ?? false
            case .hat: uv.map { $0 >= hatUV } ?? false
            case .gloves: band == .freezing
            case .water: band == .hot
            }
        }
    }

    /// The localized name.
    public func name(in language: Language) -> String {
        switch (self, language) {
        case (.umbrella, .ko): "우산"
        case (.sunscreen, .ko): "선크림"
        case (.hat, .ko): "모자"
        case (.gloves, .ko): "장갑"
        case (.water, .ko): "물"
        case (.umbrella, .en): "Umbrella"
        case (.sunscreen, .en): "Sunscreen"
        case (.hat, .en): "Hat"
        case (.gloves, .en): "Gloves"
        case (.water, .en): "Water"
        }
    }
}
