import Vocabulary
import Weather
import WeatherboardAPI

/// Attaches each distinct region's current weather (asked once per region) to a page of posts.
///
/// The upstream budget (CONTRACT §6) applies to lists too: a region that needs an upstream call counts against
/// the client's `WEATHER_COLD_PER_MINUTE` and the deployment's `WEATHER_UPSTREAM_PER_MINUTE` like a weather request,
/// but a list never answers 429 — a region refused by either limit (or unavailable) shows `currentWeather: null`.
struct WeatherAttacher {
    let weather: any WeatherProviding

    func attach(to posts: [PostResponse], units: Units, language: Language, requester: WeatherRequester) async -> [PostResponse] {
        let ids = Set(posts.compactMap { Int($0.region.id) })
        let current = await weather.currentWeather(regionIDs: ids, units: units, language: language, requester: requester)
        return posts.map { post in
            var post = post
            post.region.currentWeather = .some(Int(post.region.id).flatMap { current[$0] })
            return post
        }
    }
}
