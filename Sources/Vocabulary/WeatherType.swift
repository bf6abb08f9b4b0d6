/// The weather types of the original app's `WeatherType` (CONTRACT §2): what a post is tagged with and what a
/// provider's report is mapped to. `unknown` is what a provider code we cannot map becomes; it is never accepted
/// on a post.
public enum WeatherType: String, Codable, Sendable, CaseIterable {
    case clearSky, fewClouds, scatteredClouds, brokenClouds, showerRain, rain, thunderStorm, snow, mist, unknown

    /// Every type a post may carry.
    public static let postable: [WeatherType] = allCases.filter { $0 != .unknown }

    /// The OpenWeatherMap icon number (`01`…`50`); nil for `unknown`.
    public var icon: String? {
        switch self {
        case .clearSky: "01"
        case .fewClouds: "02"
        case .scatteredClouds: "03"
        case .brokenClouds: "04"
        case .showerRain: "09"
        case .rain: "10"
        case .thunderStorm: "11"
        case .snow: "13"
        case .mist: "50"
        case .unknown: nil
        }
    }

    /// The type an OpenWeatherMap icon stands for: its first two characters decide (`01d` → `clearSky`); nil for
    /// an icon that is none of `icon`'s.
    public init?(openWeatherMapIcon code: some StringProtocol) {
        let number = code.prefix(2)
        guard let type = Self.postable.first(where: { $0.icon.map { $0 == number } ?? false }) else { return nil }
        self = type
    }

    /// The localized name (CONTRACT §2 for Korean).
    public func name(in language: Language) -> String {
        switch (self, language) {
        case (.clearSky, .ko): "맑음"
        case (.fewClouds, .ko): "약간 흐림"
        case (.scatteredClouds, .ko): "잔 구름"
        case (.brokenClouds, .ko): "매우 흐림"
        case (.showerRain, .ko): "흐리고 비"
        case (.rain, .ko): "비"
        case (.thunderStorm, .ko): "천둥번개"
        case (.snow, .ko): "눈"
        case (.mist, .ko): "안개"
        case (.unknown, .ko): "알 수 없음"
        case (.clearSky, .en): "Clear sky"
        case (.fewClouds, .en): "Few clouds"
        case (.scatteredClouds, .en): "Scattered clouds"
        case (.brokenClouds, .en): "Broken clouds"
        case (.showerRain, .en): "Shower rain"
        case (.rain, .en): "Rain"
        case (.thunderStorm, .en): "Thunderstorm"
        case (.snow, .en): "Snow"
        case (.mist, .en): "Mist"
        case (.unknown, .en): "Unknown"
        }
    }

    /// The localized description (CONTRACT §2 for Korean): what `GET /v1/weather-types` lists and what a current
    /// weather object carries. Empty for `unknown`.
    public func description(in language: Language) -> String {
        switch (self, language) {
        case (.clearSky, .ko): "맑고 화창한 날씨!"
        case (.fewClouds, .ko): "약간의 구름이 있어요"
        case (.scatteredClouds, .ko): "잔 구름이 많아요"
        case (.brokenClouds, .ko): "매우 흐린 날씨입니다"
        case (.showerRain, .ko): "구름이 많고 비가 와요"
        case (.rain, .ko): "우산을 챙기세요!"
        case (.thunderStorm, .ko): "천둥번개가 쳐요!"
        case (.snow, .ko): "눈이 옵니다!"
        case (.mist, .ko): "안개가 끼니 주의하세요"
        case (.unknown, .ko): ""
        case (.clearSky, .en): "Clear and sunny!"
        case (.fewClouds, .en): "A few clouds about"
        case (.scatteredClouds, .en): "Plenty of scattered clouds"
        case (.brokenClouds, .en): "A very cloudy day"
        case (.showerRain, .en): "Cloudy with showers"
        case (.rain, .en): "Take an umbrella!"
        case (.thunderStorm, .en): "Thunder and lightning!"
        case (.snow, .en): "It's snowing!"
        case (.mist, .en): "Misty: take care out there"
        case (.unknown, .en): ""
        }
    }
}
