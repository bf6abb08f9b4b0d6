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
    init(_ region: Region, language: DisplayLanguage) {
        self.init(
            id: String(region.id), name: region.name(in: language), names: .init(ko: region.nameKo, en: region.nameEn),
            countryCode: region.countryCode, lat: region.lat, lon: region.lon, timezone: region.timezone
        )
    }
}

extension APIError {
    init(_ error: WeatherError) {
        switch error {
        case .unknownRegion: self = .notFound("region")
        case .unavailable(let reason): self.init(.serviceUnavailable, "weather_unavailable", reason)
        }
    }
}

/// Attaches each distinct region's current weather (asked once per region) to a page of posts.
struct WeatherAttacher {
    let weather: any WeatherProviding

    func attach(to posts: [PostResponse], units: Units, language: DisplayLanguage) async -> [PostResponse] {
        let ids = Set(posts.compactMap { Int($0.region.id) })
        let current = await weather.currentWeather(regionIDs: ids, units: units, language: language)
        return posts.map { post in
            var post = post
            post.region.currentWeather = .some(Int(post.region.id).flatMap { current[$0] }.map(WeatherResponse.init))
            return post
        }
    }
}
