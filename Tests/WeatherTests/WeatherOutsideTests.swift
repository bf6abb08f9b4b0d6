import Foundation
import Testing
import Vocabulary
@testable import Weather

/// `WeatherOutside`: the one mapping from the weather outside a region to its feels-like band (CONTRACT §9), which
/// `sort=fit`, the feed and the outfit guide all read.
@Suite struct WeatherOutsideTests {
    static func weather(feelsLikeCelsius: Double) -> CachedObservation {
        CachedObservation(
            regionID: 1835848, provider: "open-meteo",
            observation: Observation(weatherType: .rain, temperature: feelsLikeCelsius, feelsLike: feelsLikeCelsius, humidity: 50,
                                     pressure: nil, windSpeed: 1, uvIndex: nil, cloudiness: 50, observedAt: Date(timeIntervalSince1970: 0)),
            fetchedAt: Date(timeIntervalSince1970: 60)
        )
    }

    @Test("the band is decided in °C whatever units the weather is shown in, on the value rounded to one decimal")
    func bandInEitherUnits() throws {
        for (celsius, band): (Double, FeelsLikeBand) in [(30, .hot), (25, .warm), (21, .mild), (18, .cool), (14, .chilly), (10, .cold), (6, .veryCold), (-3, .freezing)] {
            let observation = Self.weather(feelsLikeCelsius: celsius)
            #expect(try WeatherOutside(observation.currentWeather(units: .metric)).band == band, "\(celsius) °C")
            #expect(try WeatherOutside(observation.currentWeather(units: .imperial)).band == band, "\(celsius) °C shown in °F")
        }
        #expect(try WeatherOutside(Self.weather(feelsLikeCelsius: 27.9).currentWeather(units: .metric)).band == .warm)
        #expect(try WeatherOutside(Self.weather(feelsLikeCelsius: 28).currentWeather(units: .metric)).band == .hot)
    }

    @Test("weather without a finite feels-like is weather_unavailable, never a band")
    func noFeelsLike() {
        for value in [Double.nan, .infinity, -.infinity] {
            var current = Self.weather(feelsLikeCelsius: 10).currentWeather(units: .metric)
            current.feelsLike = value
            #expect(throws: WeatherError.unavailable("the weather has no feels-like temperature", retryAfterSeconds: nil)) {
                try WeatherOutside(current)
            }
        }
    }
}
