/// The board's weather vocabulary (CONTRACT §2). `unknown` is what a provider code we cannot map becomes.
public enum WeatherType: String, Codable, Sendable, CaseIterable {
    case clearSky, fewClouds, scatteredClouds, brokenClouds, showerRain, rain, thunderStorm, snow, mist, unknown

    /// The localized description (CONTRACT §2 for Korean).
    public func description(in language: DisplayLanguage) -> String {
        switch language {
        case .ko:
            switch self {
            case .clearSky: return "맑고 화창한 날씨!"
            case .fewClouds: return "약간의 구름이 있어요"
            case .scatteredClouds: return "잔 구름이 많아요"
            case .brokenClouds: return "매우 흐린 날씨입니다"
            case .showerRain: return "구름이 많고 비가 와요"
            case .rain: return "우산을 챙기세요!"
            case .thunderStorm: return "천둥번개가 쳐요!"
            case .snow: return "눈이 옵니다!"
            case .mist: return "안개가 끼니 주의하세요"
            case .unknown: return ""
            }
        case .en:
            switch self {
            case .clearSky: return "Clear and sunny!"
            case .fewClouds: return "A few clouds"
            case .scatteredClouds: return "Lots of scattered clouds"
            case .brokenClouds: return "Very cloudy"
            case .showerRain: return "Cloudy with showers"
            case .rain: return "Take an umbrella!"
            case .thunderStorm: return "Thunder and lightning!"
            case .snow: return "It's snowing!"
            case .mist: return "Mist: take care"
            case .unknown: return ""
            }
        }
    }
}
