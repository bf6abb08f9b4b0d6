/// The feels-like bands of CONTRACT §9 (기온별 옷차림): what to wear at a feels-like temperature, in °C with the lower
/// bound inclusive, whatever `units` a client reads. The one table of them: `GET /v1/outfit-bands`, a post's
/// `conditions.band` and the outfit guide all read it.
public enum FeelsLikeBand: String, Codable, Sendable, CaseIterable {
    // Warmest first: the order `GET /v1/outfit-bands` lists them in.
    case hot, warm, mild, cool, chilly, cold, veryCold, freezing

    /// The lowest feels-like (°C, inclusive) of the band; nil for `freezing`, which has none.
    public var minFeelsLike: Double? {
        switch self {
        case .hot: 28
        case .warm: 23
        case .mild: 20
        case .cool: 17
        case .chilly: 12
        case .cold: 9
        case .veryCold: 5
        case .freezing: nil
        }
    }

    /// The band's upper bound (°C, exclusive): the next warmer band's lower bound; nil for `hot`.
    public var maxFeelsLike: Double? {
        guard let index = Self.allCases.firstIndex(of: self), index > 0 else { return nil }
        return Self.allCases[index - 1].minFeelsLike
    }

    /// The band of a feels-like temperature in °C, decided on the value rounded to one decimal (the value a post
    /// shows): 27.9 is `warm`, 27.95 rounds to 28.0 and is `hot`. Nil for NaN or an infinity (outside data never
    /// traps).
    public init?(celsius: Double) {
        guard celsius.isFinite else { return nil }
        let shown = Self.rounded(celsius)
        self = Self.allCases.first { band in band.minFeelsLike.map { shown >= $0 } ?? true } ?? .freezing
    }

    /// The band of a feels-like temperature given in `units` (°F for imperial, converted to °C first).
    public init?(feelsLike: Double, units: Units) {
        switch units {
        case .metric: self.init(celsius: feelsLike)
        case .imperial: self.init(celsius: (feelsLike - 32) * 5 / 9)
        }
    }

    /// One decimal, as stored and shown (`posts.conditions_feels_like` is `numeric(4,1)`).
    public static func rounded(_ celsius: Double) -> Double { (celsius * 10).rounded() / 10 }

    /// The bands just warmer and just colder (one or two): the `fit` order's second group.
    public var neighbours: [FeelsLikeBand] {
        guard let index = Self.allCases.firstIndex(of: self) else { return [] }
        return [index - 1, index + 1].filter { Self.allCases.indices.contains($0) }.map { Self.allCases[$0] }
    }

    /// The localized name.
    public func name(in language: Language) -> String {
        switch (self, language) {
        case (.hot, .ko): "더움"
        case (.warm, .ko): "따뜻함"
        case (.mild, .ko): "포근함"
        case (.cool, .ko): "선선함"
        case (.chilly, .ko): "쌀쌀함"
        case (.cold, .ko): "추움"
        case (.veryCold, .ko): "많이 추움"
        case (.freezing, .ko): "매우 추움"
        case (.hot, .en): "Hot"
        case (.warm, .en): "Warm"
        case (.mild, .en): "Mild"
        case (.cool, .en): "Cool"
        case (.chilly, .en): "Chilly"
        case (.cold, .en): "Cold"
        case (.veryCold, .en): "Very cold"
        case (.freezing, .en): "Freezing"
        }
    }

    /// What to wear (CONTRACT §9's table, in its order).
    public func items(in language: Language) -> [String] {
        switch (self, language) {
        case (.hot, .ko): ["민소매", "반팔", "반바지", "린넨 옷"]
        case (.warm, .ko): ["반팔", "얇은 셔츠", "반바지", "면바지"]
        case (.mild, .ko): ["얇은 가디건", "긴팔", "면바지", "청바지"]
        case (.cool, .ko): ["얇은 니트", "맨투맨", "가디건", "청바지"]
        case (.chilly, .ko): ["자켓", "가디건", "야상", "청바지"]
        case (.cold, .ko): ["자켓", "트렌치코트", "니트"]
        case (.veryCold, .ko): ["코트", "가죽자켓", "히트텍", "니트"]
        case (.freezing, .ko): ["패딩", "두꺼운 코트", "목도리", "기모"]
        case (.hot, .en): ["sleeveless top", "T-shirt", "shorts", "linen"]
        case (.warm, .en): ["T-shirt", "thin shirt", "shorts", "cotton trousers"]
        case (.mild, .en): ["light cardigan", "long sleeves", "chinos", "jeans"]
        case (.cool, .en): ["thin knit", "sweatshirt", "cardigan", "jeans"]
        case (.chilly, .en): ["jacket", "cardigan", "field jacket", "jeans"]
        case (.cold, .en): ["jacket", "trench coat", "knit"]
        case (.veryCold, .en): ["coat", "leather jacket", "thermal layer", "knit"]
        case (.freezing, .en): ["padded coat", "heavy coat", "scarf", "fleece"]
        }
    }
}
