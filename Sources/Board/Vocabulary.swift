import Foundation

/// The weather types of the original app's `WeatherType`. `unknown` exists but is never accepted on a post.
public enum WeatherType: String, Sendable, CaseIterable {
    case clearSky, fewClouds, scatteredClouds, brokenClouds, showerRain, rain, thunderStorm, snow, mist, unknown

    /// Every type a post may carry.
    public static let postable: [WeatherType] = allCases.filter { $0 != .unknown }

    /// OpenWeatherMap icon number (`01`…`50`).
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

    public func name(_ language: Language) -> String {
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

    public func description(_ language: Language) -> String {
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

public enum Category: String, Sendable, CaseIterable {
    case food, place, music, outfit, activity

    public func name(_ language: Language) -> String {
        switch (self, language) {
        case (.food, .ko): "음식"
        case (.place, .ko): "장소"
        case (.music, .ko): "음악"
        case (.outfit, .ko): "옷차림"
        case (.activity, .ko): "활동"
        case (.food, .en): "Food"
        case (.place, .en): "Places"
        case (.music, .en): "Music"
        case (.outfit, .en): "Outfits"
        case (.activity, .en): "Activities"
        }
    }
}

/// Display language, from `Accept-Language` (`ko` by default).
public enum Language: String, Sendable {
    case ko, en

    /// Picks the first supported language of an `Accept-Language` header, honouring q-values.
    public init(acceptLanguage header: String?) {
        guard let header, !header.isEmpty else {
            self = .ko
            return
        }
        var best: (Language, Double)?
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let tag = pieces.first else { continue }
            var q = 1.0
            for parameter in pieces.dropFirst() where parameter.hasPrefix("q=") {
                q = Double(parameter.dropFirst(2)) ?? 0
            }
            let primary = tag.split(separator: "-").first.map(String.init) ?? tag
            guard let language = Language(rawValue: primary), q > 0 else { continue }
            if best == nil || q > best!.1 { best = (language, q) }
        }
        self = best?.0 ?? .ko
    }
}
