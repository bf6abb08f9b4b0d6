import Board
import Hummingbird
import Vocabulary
import Weather
import WeatherboardAPI

/// CONTRACT §9's outfit guide: `GET /v1/outfit-bands`, and `GET /v1/regions/{id}/outfit` or `GET /v1/outfit?lat=&lon=`
/// (the region's weather, its feels-like band with what to wear, what to carry, and the `outfit` posts). The band
/// is decided in °C whatever `units` the weather is shown in; no weather is 503 `weather_unavailable` as §6.
struct OutfitController {
    let mediaURLs: MediaURLs
    let posts: PostService
    let regions: RegionStore
    let weather: any WeatherProviding

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("outfit-bands", use: bands)
        routes.get("regions/:id/outfit", use: regionOutfit)
        routes.get("outfit", use: nearestOutfit)
        return routes
    }

    @Sendable func bands(_ request: Request, context: AppRequestContext) async throws -> Response {
        let language = request.language
        return jsonResponse(Page(items: FeelsLikeBand.allCases.map { OutfitBandResponse($0, language: language) }, nextCursor: nil))
    }

    @Sendable func regionOutfit(_ request: Request, context: AppRequestContext) async throws -> Response {
        guard let id = RegionsController.regionID(context), let region = try await regions.region(id: id) else { throw APIError.notFound("region") }
        return try await outfit(region, request, context)
    }

    @Sendable func nearestOutfit(_ request: Request, context: AppRequestContext) async throws -> Response {
        let query = QueryInput(request)
        let lat = try query.coordinate("lat", range: -90...90)
        let lon = try query.coordinate("lon", range: -180...180)
        guard let region = try await regions.nearest(lat: lat, lon: lon) else { throw APIError.notFound("region") }
        return try await outfit(region, request, context)
    }

    private func outfit(_ region: Region, _ request: Request, _ context: AppRequestContext) async throws -> Response {
        let parameters = QueryInput(request)
        let units = try parameters.units()
        let limit = try parameters.pageLimit()
        let (sort, cursor, after) = try parameters.sortedCursor(default: .fit)
        let language = request.language
        let outside = try await weather.outside(regionID: region.id, units: units, language: language, requester: WeatherRequester(context))
        let (current, band) = (outside.current, outside.band)
        let carry = CarryItem.items(weatherType: current.weatherType, uvIndex: current.uvIndex, band: band)
        let page = try await posts.outfitPosts(band: band, sort: sort, before: cursor, after: after, limit: limit, viewer: context.viewer)
        let viewer = context.viewer  // as the list's own statement found the token (`SessionGate`)
        let links = mediaURLs.links(request, context)
        return jsonResponse(
            OutfitResponse(
                region: RegionResponse(region, language: language),
                currentWeather: current,
                band: OutfitBandResponse(band, language: language),
                carry: carry.map { CarryResponse($0, language: language) },
                posts: Page(items: page.posts.map { PostResponse($0, viewer: viewer, language: language, media: links) }, nextCursor: page.nextCursor)
            )
        )
    }
}
