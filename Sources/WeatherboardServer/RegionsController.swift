import Board
import Database
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Vocabulary
import Weather
import WeatherboardAPI

/// CONTRACT §6: region search, nearest region, a region, and its current weather.
struct RegionsController {
    let regions: RegionStore
    let weather: any WeatherProviding
    let encodedWeather = EncodedWeatherCache()

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("regions", use: search)
        routes.get("regions/nearest", use: nearest)
        routes.get("regions/:id", use: show)
        routes.get("regions/:id/weather", use: currentWeather)
        return routes
    }

    /// `GET /v1/regions?q=&limit=&cursor=`: prefix search on normalized names, most populous first.
    /// Without `q` (or with an empty one) it lists every region, most populous first.
    @Sendable func search(_ request: Request, context: AppRequestContext) async throws -> Response {
        let query = QueryInput(request)
        let q = query.get("q").map { $0.replacingOccurrences(of: "+", with: " ") } ?? ""
        guard q.unicodeScalars.count <= 100 else { throw APIError.badRequest("q is longer than 100 characters") }
        let limit = try query.pageLimit()
        var cursor: RegionStore.SearchPosition?
        if let token = query.get("cursor"), !token.isEmpty {
            guard let parsed = RegionStore.SearchPosition(token: token) else { throw APIError.badRequest("cursor is not valid") }
            cursor = parsed
        }
        let language = request.language
        let page = try await regions.search(prefix: q, after: cursor, limit: limit)
        return jsonResponse(Page(items: page.regions.map { RegionResponse($0, language: language) }, nextCursor: page.next?.token))
    }

    /// `GET /v1/regions/nearest?lat=&lon=`.
    @Sendable func nearest(_ request: Request, context: AppRequestContext) async throws -> Response {
        let query = QueryInput(request)
        let lat = try query.coordinate("lat", range: -90...90)
        let lon = try query.coordinate("lon", range: -180...180)
        guard let region = try await regions.nearest(lat: lat, lon: lon) else { throw APIError.notFound("region") }
        return jsonResponse(RegionResponse(region, language: request.language))
    }

    /// `GET /v1/regions/{id}`.
    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        guard let id = Self.regionID(context), let region = try await regions.region(id: id) else { throw APIError.notFound("region") }
        return jsonResponse(RegionResponse(region, language: request.language))
    }

    /// `GET /v1/regions/{id}/weather?units=metric|imperial`.
    @Sendable func currentWeather(_ request: Request, context: AppRequestContext) async throws -> Response {
        guard let id = Self.regionID(context) else { throw APIError.notFound("region") }
        let units = try QueryInput(request).units()
        let language = request.language
        let current = try await weather.currentWeather(regionID: id, units: units, language: language, requester: WeatherRequester(context))
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: try encodedWeather.body(for: current, language: language))
        )
    }

    // MARK: Parameters

    /// Ids are decimal geonameids, exactly as the server gave them (`CanonicalID`); anything else cannot
    /// name a region (404, not 400).
    static func regionID(_ context: AppRequestContext) -> Int? {
        context.parameters.get("id").flatMap { CanonicalID.parse($0) }
    }
}
