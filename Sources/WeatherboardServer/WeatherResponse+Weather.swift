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
        case .unknownRegion:
            self = .notFound("region")
        case .unavailable(let reason, let retryAfter):
            self.init(.serviceUnavailable, "weather_unavailable", reason, retryAfter: retryAfter)
        case .rateLimited(let seconds):
            self.init(.tooManyRequests, "rate_limited", "too many requests for uncached weather; try again in \(seconds) s", retryAfter: seconds)
        }
    }
}

extension WeatherRequester {
    /// The client of `context`, by the address the server computes for rate limits.
    init(_ context: AppRequestContext) {
        self.init(clientAddress: context.clientIP)
    }
}

/// Attaches each distinct region's current weather (asked once per region) to a page of posts.
///
/// The upstream budget (CONTRACT §6) applies to lists too: a region that needs an upstream call counts against
/// the client's `WEATHER_COLD_PER_MINUTE` and the deployment's `WEATHER_UPSTREAM_PER_MINUTE` like a weather request,
/// but a list never answers 429 — a region refused by either limit (or unavailable) shows `currentWeather: null`.
struct WeatherAttacher {
    let weather: any WeatherProviding

    func attach(to posts: [PostResponse], units: Units, language: DisplayLanguage, requester: WeatherRequester) async -> [PostResponse] {
        let ids = Set(posts.compactMap { Int($0.region.id) })
        let current = await weather.currentWeather(regionIDs: ids, units: units, language: language, requester: requester)
        return posts.map { post in
            var post = post
            post.region.currentWeather = .some(Int(post.region.id).flatMap { current[$0] }.map(WeatherResponse.init))
            return post
        }
    }
}
