import Board
import Foundation
import Hummingbird
import Vocabulary
import Weather
import WeatherboardAPI

/// `GET /v1/feed?regionId=` or `?lat=&lon=`: the region, its current weather, and the posts tagged with that
/// weather type, from every region (or only the region's own with `regionOnly=true`), ranked by `fit` for the
/// region's feels-like band unless another `sort` is asked (CONTRACT §9).
struct FeedController {
    let mediaURLs: MediaURLs
    let posts: PostService
    let regions: RegionStore
    let weather: any WeatherProviding

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("feed", use: feed)
        return routes
    }

    /// `GET /v1/feed`'s answer (CONTRACT §6), written by `JSONWriter` like the posts it holds (keys sorted,
    /// `nextCursor` always present).
    struct FeedResponse: JSONWritable {
        var region: RegionResponse
        var currentWeather: CurrentWeather
        var items: [PostResponse]
        var nextCursor: String?

        func write(to w: inout JSONWriter) {
            w.raw("{")
            w.key("currentWeather", first: true)
            currentWeather.write(to: &w)
            w.key("items")
            w.array(items)
            w.key("nextCursor")
            w.optionalString(nextCursor)
            w.key("region")
            region.write(to: &w)
            w.raw("}")
        }
    }

    @Sendable func feed(_ request: Request, context: AppRequestContext) async throws -> Response {
        let parameters = QueryInput(request)
        let includeWeather = try parameters.includes(allowed: ["weather"]).contains("weather")
        let units = try parameters.units()
        let regionOnly: Bool
        switch parameters.get("regionOnly") {
        case nil, "false": regionOnly = false
        case "true": regionOnly = true
        default: throw APIError.badRequest("regionOnly must be true or false")
        }
        let limit = try parameters.pageLimit()
        let (sort, cursor, after) = try parameters.sortedCursor(default: .fit)
        let language = request.language

        let region: Region
        if let rawID = parameters.get("regionId") {
            guard parameters.get("lat") == nil, parameters.get("lon") == nil else {
                throw APIError.badRequest("give regionId or lat and lon, not both")
            }
            guard let id = CanonicalID.parse(rawID), let found = try await regions.region(id: id) else { throw APIError.notFound("region") }
            region = found
        } else if parameters.get("lat") != nil || parameters.get("lon") != nil {
            let lat = try parameters.coordinate("lat", range: -90...90)
            let lon = try parameters.coordinate("lon", range: -180...180)
            guard let nearest = try await regions.nearest(lat: lat, lon: lon) else { throw APIError.notFound("region") }
            region = nearest
        } else {
            throw APIError.badRequest("regionId, or lat and lon, is required")
        }

        let outside = try await weather.outside(regionID: region.id, units: units, language: language, requester: WeatherRequester(context))
        let current = outside.current
        let links = mediaURLs.links(request, context)
        var items: [PostResponse] = []
        var nextCursor: String?
        // `unknown` weather matches no post (posts never carry it).
        if current.weatherType != .unknown {
            var query = PostQuery(weatherType: current.weatherType, regionID: regionOnly ? region.id : nil, before: cursor, limit: limit)
            query.sort = sort
            query.after = after
            query.fitBand = outside.band
            let page = try await posts.list(query, viewer: context.viewer)
            let viewer = context.viewer  // as the list's own statement found the token (`SessionGate`)
            items = page.posts.map { PostResponse($0, viewer: viewer, language: language, media: links) }
            nextCursor = page.nextCursor
        }
        if includeWeather {
            items = await WeatherAttacher(weather: weather).attach(to: items, units: units, language: language, requester: WeatherRequester(context))
        }
        return jsonResponse(
            FeedResponse(region: RegionResponse(region, language: language), currentWeather: current, items: items, nextCursor: nextCursor)
        )
    }
}
