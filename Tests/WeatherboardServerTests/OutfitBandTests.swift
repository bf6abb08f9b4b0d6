import Foundation
import Testing
import Vocabulary

@Suite("Feels-like bands and carry items (CONTRACT §9)")
struct OutfitBandTests {
    @Test("a band is decided on the one-decimal °C value, lower bounds inclusive")
    func edgesInCelsius() {
        let cases: [(Double, FeelsLikeBand)] = [
            (27.9, .warm), (28.0, .hot), (4.9, .freezing), (5.0, .veryCold),
            (27.94, .warm), (27.95, .hot), (4.94, .freezing), (4.95, .veryCold),
            (23.0, .warm), (22.9, .mild), (20.0, .mild), (19.9, .cool), (17.0, .cool), (16.9, .chilly),
            (12.0, .chilly), (11.9, .cold), (9.0, .cold), (8.9, .veryCold), (-40, .freezing), (55, .hot),
        ]
        for (celsius, band) in cases {
            #expect(FeelsLikeBand(celsius: celsius) == band, "\(celsius) °C")
        }
        for band in FeelsLikeBand.allCases {
            if let min = band.minFeelsLike { #expect(FeelsLikeBand(celsius: min) == band) }
        }
    }

    @Test("°F values give the band of their °C value: bands are always in °C")
    func edgesInFahrenheit() {
        // The °F a weather object shows for 27.9, 28.0, 4.9 and 5.0 °C (one decimal, as Weather converts).
        let cases: [(Double, FeelsLikeBand)] = [(82.2, .warm), (82.4, .hot), (40.8, .freezing), (41.0, .veryCold), (73.4, .warm), (73.2, .mild)]
        for (fahrenheit, band) in cases {
            #expect(FeelsLikeBand(feelsLike: fahrenheit, units: .imperial) == band, "\(fahrenheit) °F")
        }
        // Every one-decimal °C value from -30 to 45 shown in °F (rounded to one decimal) lands in its own band.
        for tenth in -300...450 {
            let celsius = Double(tenth) / 10
            let fahrenheit = ((celsius * 9 / 5 + 32) * 10).rounded() / 10
            #expect(FeelsLikeBand(feelsLike: fahrenheit, units: .imperial) == FeelsLikeBand(celsius: celsius), "\(celsius) °C = \(fahrenheit) °F")
        }
    }

    @Test("outside data never traps: NaN and infinities have no band and no conditions")
    func nonFinite() {
        for value in [Double.nan, .infinity, -.infinity, .signalingNaN] {
            #expect(FeelsLikeBand(celsius: value) == nil)
            #expect(FeelsLikeBand(feelsLike: value, units: .imperial) == nil)
            #expect(PostConditions(weatherType: .rain, feelsLikeCelsius: value, observedAt: Date()) == nil)
        }
        #expect(PostConditions(weatherType: .rain, feelsLikeCelsius: 1e6, observedAt: Date()) == nil)
        #expect(PostConditions(weatherType: .rain, feelsLikeCelsius: 27.95, observedAt: Date())?.feelsLike == 28.0)
        #expect(PostConditions(weatherType: .rain, feelsLikeCelsius: 27.95, observedAt: Date())?.band == .hot)
    }

    @Test("the table: bounds, neighbours, items in both languages")
    func table() {
        #expect(FeelsLikeBand.allCases.map(\.rawValue) == ["hot", "warm", "mild", "cool", "chilly", "cold", "veryCold", "freezing"])
        #expect(FeelsLikeBand.allCases.map(\.minFeelsLike) == [28, 23, 20, 17, 12, 9, 5, nil])
        #expect(FeelsLikeBand.allCases.map(\.maxFeelsLike) == [nil, 28, 23, 20, 17, 12, 9, 5])
        #expect(FeelsLikeBand.hot.neighbours == [.warm])
        #expect(FeelsLikeBand.mild.neighbours == [.warm, .cool])
        #expect(FeelsLikeBand.freezing.neighbours == [.veryCold])
        #expect(FeelsLikeBand.cold.items(in: .ko) == ["자켓", "트렌치코트", "니트"])
        #expect(FeelsLikeBand.veryCold.items(in: .en) == ["coat", "leather jacket", "thermal layer", "knit"])
        #expect(FeelsLikeBand.allCases.allSatisfy { !$0.items(in: .ko).isEmpty && $0.items(in: .ko).count == $0.items(in: .en).count })
    }

    @Test("carry: umbrella for wet types, sunscreen from UV 3, hat from UV 6, gloves when freezing, water when hot")
    func carry() {
        #expect(CarryItem.items(weatherType: .rain, uvIndex: 6, band: .hot) == [.umbrella, .sunscreen, .hat, .water])
        #expect(CarryItem.items(weatherType: .clearSky, uvIndex: 5.9, band: .warm) == [.sunscreen])
        #expect(CarryItem.items(weatherType: .clearSky, uvIndex: 2.9, band: .warm) == [])
        #expect(CarryItem.items(weatherType: .snow, uvIndex: nil, band: .freezing) == [.umbrella, .gloves])
        #expect(CarryItem.items(weatherType: .mist, uvIndex: .nan, band: .mild) == [])
        for type in WeatherType.allCases {
            let wet = [WeatherType.showerRain, .rain, .thunderStorm, .snow].contains(type)
            #expect(CarryItem.items(weatherType: type, uvIndex: 0, band: .mild).contains(.umbrella) == wet, "\(type)")
        }
    }
}
