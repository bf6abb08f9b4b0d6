import Vocabulary
import Weather
import WeatherboardAPI

extension RegionResponse {
    init(_ region: Region, language: Language) {
        self.init(
            id: String(region.id), name: region.name(in: language), names: .init(ko: region.nameKo, en: region.nameEn),
            countryCode: region.countryCode, lat: region.lat, lon: region.lon, timezone: region.timezone
        )
    }
}
