import Foundation
import Testing
import Vocabulary
@testable import Weather

/// Recorded bodies (shapes as the real APIs answer), parsed and mapped without the network.
@Suite struct ProviderParsingTests {
    static let openMeteo = """
        {"latitude":37.55,"longitude":127.0,"generationtime_ms":0.06,"utc_offset_seconds":32400,"timezone":"Asia/Seoul",
         "timezone_abbreviation":"KST","elevation":38.0,
         "current_units":{"time":"iso8601","interval":"seconds","temperature_2m":"°C"},
         "current":{"time":"2026-11-22T18:30","interval":900,"temperature_2m":3.4,"relative_humidity_2m":61,
         "apparent_temperature":-0.8,"weather_code":61,"cloud_cover":100,"pressure_msl":1021.7,"wind_speed_10m":3.9,"uv_index":0.0}}
        """

    @Test func openMeteoBody() throws {
        let o = try OpenMeteoProvider.parse(Array(Self.openMeteo.utf8))
        #expect(o.weatherType == .rain)
        #expect(o.temperature == 3.4)
        #expect(o.feelsLike == -0.8)
        #expect(o.humidity == 61)
        #expect(o.pressure == 1021.7)
        #expect(o.windSpeed == 3.9)
        #expect(o.uvIndex == 0)
        #expect(o.cloudiness == 100)
        // 18:30 KST is 09:30 UTC.
        #expect(o.observedAt == ISO8601DateFormatter().date(from: "2026-11-22T09:30:00Z"))
    }

    @Test(arguments: [
        (0, WeatherType.clearSky), (1, .fewClouds), (2, .scatteredClouds), (3, .brokenClouds), (45, .mist), (48, .mist),
        (51, .showerRain), (57, .showerRain), (80, .showerRain), (82, .showerRain), (61, .rain), (65, .rain),
        (66, .snow), (67, .snow), (71, .snow), (77, .snow), (85, .snow), (86, .snow), (95, .thunderStorm), (99, .thunderStorm),
        (4, .unknown), (100, .unknown),
    ])
    func wmoCodes(code: Int, expected: WeatherType) {
        #expect(OpenMeteoProvider.weatherType(wmoCode: code) == expected)
    }

    @Test func openMeteoGarbage() {
        #expect(throws: ProviderError.self) { try OpenMeteoProvider.parse(Array("<html>oops</html>".utf8)) }
        #expect(throws: ProviderError.self) { try OpenMeteoProvider.parse(Array(#"{"error":true,"reason":"bad"}"#.utf8)) }
    }

    static let openWeatherMap = """
        {"lat":37.5665,"lon":126.978,"timezone":"Asia/Seoul","timezone_offset":32400,
         "current":{"dt":1795339800,"sunrise":1795298000,"sunset":1795334000,"temp":2.1,"feels_like":-1.5,"pressure":1024,
         "humidity":55,"dew_point":-5.2,"uvi":0.3,"clouds":40,"visibility":10000,"wind_speed":3.6,"wind_deg":320,
         "weather":[{"id":802,"main":"Clouds","description":"scattered clouds","icon":"03n"}]}}
        """

    @Test func openWeatherMapBody() throws {
        let o = try OpenWeatherMapProvider.parse(Array(Self.openWeatherMap.utf8))
        #expect(o.weatherType == .scatteredClouds)
        #expect(o.temperature == 2.1)
        #expect(o.feelsLike == -1.5)
        #expect(o.pressure == 1024)
        #expect(o.humidity == 55)
        #expect(o.uvIndex == 0.3)
        #expect(o.cloudiness == 40)
        #expect(o.windSpeed == 3.6)
        #expect(o.observedAt == Date(timeIntervalSince1970: 1_795_339_800))
    }

    @Test func openWeatherMapIconThenIdFallback() {
        #expect(OpenWeatherMapProvider.weatherType(icon: "09d", id: 800) == .showerRain)
        #expect(OpenWeatherMapProvider.weatherType(icon: "50n", id: nil) == .mist)
        #expect(OpenWeatherMapProvider.weatherType(icon: nil, id: 211) == .thunderStorm)
        #expect(OpenWeatherMapProvider.weatherType(icon: "", id: 301) == .showerRain)
        #expect(OpenWeatherMapProvider.weatherType(icon: "zz", id: 501) == .rain)
        #expect(OpenWeatherMapProvider.weatherType(icon: nil, id: 521) == .showerRain)
        #expect(OpenWeatherMapProvider.weatherType(icon: nil, id: 511) == .snow)
        #expect(OpenWeatherMapProvider.weatherType(icon: nil, id: 601) == .snow)
        #expect(OpenWeatherMapProvider.weatherType(icon: nil, id: 741) == .mist)
        #expect(OpenWeatherMapProvider.weatherType(icon: nil, id: 800) == .clearSky)
        #expect(OpenWeatherMapProvider.weatherType(icon: nil, id: 801) == .fewClouds)
        #expect(OpenWeatherMapProvider.weatherType(icon: nil, id: 804) == .brokenClouds)
        #expect(OpenWeatherMapProvider.weatherType(icon: nil, id: nil) == .unknown)
    }

    static func kmaNowcast(pty: String = "0", rn1: String = "강수없음") -> String {
        func item(_ category: String, _ value: String) -> String {
            #"{"baseDate":"20261122","baseTime":"1800","category":"\#(category)","nx":60,"ny":127,"obsrValue":"\#(value)"}"#
        }
        let items = [item("PTY", pty), item("REH", "70"), item("RN1", rn1), item("T1H", "4.5"), item("UUU", "-1.2"),
                     item("VEC", "300"), item("VVV", "0.8"), item("WSD", "2.1")]
        return #"{"response":{"header":{"resultCode":"00","resultMsg":"NORMAL_SERVICE"},"body":{"dataType":"JSON","items":{"item":[\#(items.joined(separator: ","))]},"pageNo":1,"numOfRows":60,"totalCount":8}}}"#
    }

    static func kmaForecast(sky: String = "1", lgt: String = "0") -> String {
        func item(_ category: String, _ time: String, _ value: String) -> String {
            #"{"baseDate":"20261122","baseTime":"1730","category":"\#(category)","fcstDate":"20261122","fcstTime":"\#(time)","fcstValue":"\#(value)","nx":60,"ny":127}"#
        }
        // The later hour says something else: the earliest must win.
        let items = [item("LGT", "1900", "1"), item("LGT", "1800", lgt), item("SKY", "1900", "4"), item("SKY", "1800", sky),
                     item("T1H", "1800", "4")]
        return #"{"response":{"header":{"resultCode":"00","resultMsg":"NORMAL_SERVICE"},"body":{"dataType":"JSON","items":{"item":[\#(items.joined(separator: ","))]},"pageNo":1,"numOfRows":60,"totalCount":5}}}"#
    }

    @Test func kmaBodies() throws {
        let o = try KMAProvider.parse(nowcast: Array(Self.kmaNowcast().utf8), forecast: Array(Self.kmaForecast().utf8))
        #expect(o.weatherType == .clearSky)
        #expect(o.temperature == 4.5)
        #expect(o.humidity == 70)
        #expect(o.windSpeed == 2.1)
        #expect(o.pressure == nil)
        #expect(o.uvIndex == nil)
        #expect(o.cloudiness == 20)
        #expect(o.observedAt == ISO8601DateFormatter().date(from: "2026-11-22T09:00:00Z"))
    }

    @Test func kmaPrecipitationWinsOverSky() throws {
        let rain = try KMAProvider.parse(nowcast: Array(Self.kmaNowcast(pty: "1", rn1: "1mm 미만").utf8), forecast: Array(Self.kmaForecast(sky: "1").utf8))
        #expect(rain.weatherType == .rain)
        let storm = try KMAProvider.parse(nowcast: Array(Self.kmaNowcast(pty: "1").utf8), forecast: Array(Self.kmaForecast(lgt: "2").utf8))
        #expect(storm.weatherType == .thunderStorm)
    }

    @Test(arguments: [
        (1, nil as Int?, WeatherType.rain), (4, nil, .showerRain), (5, nil, .showerRain), (2, nil, .snow), (3, nil, .snow),
        (6, nil, .snow), (7, nil, .snow), (0, 1, .clearSky), (0, 3, .brokenClouds), (0, 4, .brokenClouds), (0, nil, .unknown),
    ])
    func kmaCodes(pty: Int, sky: Int?, expected: WeatherType) {
        #expect(KMAProvider.weatherType(pty: pty, sky: sky, lightning: 0) == expected)
    }

    @Test func kmaErrorsAndText() {
        let error = #"{"response":{"header":{"resultCode":"03","resultMsg":"NO_DATA"}}}"#
        #expect(throws: ProviderError.self) { try KMAProvider.parse(nowcast: Array(error.utf8), forecast: Array(Self.kmaForecast().utf8)) }
        let xml = "<OpenAPI_ServiceResponse><cmmMsgHeader><errMsg>SERVICE ERROR</errMsg></cmmMsgHeader></OpenAPI_ServiceResponse>"
        #expect(throws: ProviderError.self) { try KMAProvider.parse(nowcast: Array(xml.utf8), forecast: Array(Self.kmaForecast().utf8)) }
        #expect(throws: ProviderError.self) {
            try KMAProvider.parse(nowcast: Array(Self.kmaNowcast().replacingOccurrences(of: "\"4.5\"", with: "\"-\"").utf8), forecast: Array(Self.kmaForecast().utf8))
        }
    }

    @Test func kmaBaseTimes() {
        // 2026-11-22 09:35 UTC = 18:35 KST: nowcast 1700 (18:00 is published at 18:40), forecast 1730.
        let now = ISO8601DateFormatter().date(from: "2026-11-22T09:35:00Z")!
        #expect(KMAProvider.baseDateTime(now: now, forecast: false) == ("20261122", "1700"))
        #expect(KMAProvider.baseDateTime(now: now, forecast: true) == ("20261122", "1730"))
        // 00:20 KST belongs to the previous day's 23:00 / 23:30.
        let midnight = ISO8601DateFormatter().date(from: "2026-11-21T15:20:00Z")!
        #expect(KMAProvider.baseDateTime(now: midnight, forecast: false) == ("20261121", "2300"))
        #expect(KMAProvider.baseDateTime(now: midnight, forecast: true) == ("20261121", "2330"))
    }
}
