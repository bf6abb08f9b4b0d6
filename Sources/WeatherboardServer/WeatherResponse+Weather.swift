import Vocabulary
import Weather
import WeatherboardAPI

extension WeatherResponse {
    init(_ current: CurrentWeather) {
        self.init(
            regionId: current.regionId, weatherType: current.weatherType.rawValue, description: current.description,
            temperature: current.temperature, feelsLike: current.feelsLike, humidity: Double(current.humidity),
            pressure: current.pressure, windSpeed: current.windSpeed, uvIndex: current.uvIndex,
            cloudiness: Double(current.cloudiness), observedAt: current.observedAt, fetchedAt: current.fetchedAt,
            provider: current.provider, stale: current.stale, units: current.units.rawValue
        )
    }
}

extension RegionResponse {
    init(_ region: Region, language: Language) {
        self.init(
            id: String(region.id), name: region.name(in: language), names: .init(ko: region.nameKo, en: region.nameEn),
            countryCode: region.countryCode, lat: region.lat, lon: region.lon, timezone: region.timezone
        )
    }
}
