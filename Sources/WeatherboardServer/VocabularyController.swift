import Vocabulary
import Hummingbird
import WeatherboardAPI

/// `GET /v1/weather-types` and `GET /v1/categories`, localized by `Accept-Language`.
struct VocabularyController {
    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("weather-types") { request, _ in
            let language = request.language
            let items = WeatherType.postable.map {
                VocabularyItem(id: $0.rawValue, name: $0.name(in: language), description: $0.description(in: language), icon: $0.icon)
            }
            return try jsonResponse(Page(items: items, nextCursor: nil))
        }
        routes.get("categories") { request, _ in
            let language = request.language
            return try jsonResponse(Page(items: Category.allCases.map { VocabularyItem(id: $0.rawValue, name: $0.name(in: language)) }, nextCursor: nil))
        }
        return routes
    }
}
