import Board
import Foundation
import Hummingbird
import Vocabulary
import Weather
import WeatherboardAPI

/// CONTRACT §4: posts.
struct PostsController {
    let mediaURLs: MediaURLs
    let posts: PostService
    let weather: any WeatherProviding

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.post("posts", use: create)
        routes.get("posts", use: list)
        routes.get("posts/:id", use: show)
        routes.patch("posts/:id", use: update)
        routes.delete("posts/:id", use: delete)
        routes.put("posts/:id/helpful", use: markHelpful)
        routes.delete("posts/:id/helpful", use: unmarkHelpful)
        return routes
    }

    @Sendable func create(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let body = try await request.decodeJSON(as: CreatePostRequest.self, context: context)
        let location: PostLocation?
        // `location` is instead of `regionId` (CONTRACT §4); both at once would leave one unchecked.
        guard body.regionId == nil || body.location == nil else { throw APIError.invalidField("location", "give regionId or location, not both") }
        if let regionId = body.regionId {
            guard let id = CanonicalID.parse(regionId) else { throw APIError.invalidField("regionId", "no such region") }
            location = .region(id)
        } else if let point = body.location {
            location = .coordinates(lat: point.lat, lon: point.lon)
        } else {
            location = nil
        }
        var draft = PostDraft(weatherType: body.weatherType, category: body.category, title: body.title, body: body.body, location: location)
        draft.mediaIDs = try Self.mediaIDs(body.mediaIds) ?? []
        let (post, _) = try await posts.create(draft, by: caller, idempotencyKey: request.idempotencyKey, clientAddress: context.clientIP)
        return jsonResponse(PostResponse(post, viewer: context.viewer, language: request.language, media: mediaURLs.links(request, context)), status: .created)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        let input = QueryInput(request)
        let includeWeather = try input.includes(allowed: ["weather"]).contains("weather")
        let units = try input.units()
        let (sort, before, after) = try input.sortedCursor()
        var query = PostQuery(
            weatherType: try input.value("weatherType", as: WeatherType.self) { $0 != .unknown },
            category: try input.value("category", as: Category.self),
            regionID: try input.id("regionId"),
            authorID: try input.id("authorId"),
            before: before,
            limit: try input.pageLimit()
        )
        query.sort = sort
        query.after = after
        query.search = try input.get("q").map(SearchTerms.init(parsing:))
        if sort == .fit {
            // `fit` ranks for the weather outside a place: the region's (CONTRACT §9). A later page goes on in the
            // band its cursor carries, with no weather call.
            guard let regionID = query.regionID else {
                throw APIError.badRequest("sort=fit ranks for the weather outside a place: give regionId")
            }
            if after == nil {
                query.fitBand = try await weather.outside(regionID: regionID, units: units, language: request.language, requester: WeatherRequester(context)).band
            }
        }
        let links = mediaURLs.links(request, context)
        let page = try await posts.list(query, viewer: context.viewer)
        let viewer = context.viewer  // as the list's own statement found the token (`SessionGate`)
        let language = request.language
        var items = page.posts.map { PostResponse($0, viewer: viewer, language: language, media: links) }
        if includeWeather {
            items = await WeatherAttacher(weather: weather).attach(to: items, units: units, language: language, requester: WeatherRequester(context))
        }
        return jsonResponse(Page(items: items, nextCursor: page.nextCursor))
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let post = try await posts.post(id: try context.pathID("id", "post"), viewer: context.viewer)
        var response = jsonResponse(PostResponse(post, viewer: context.viewer, language: request.language, media: mediaURLs.links(request, context)))
        response.headers[.eTag] = PostETag.value(post)
        return response
    }

    @Sendable func update(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let id = try context.pathID("id", "post")
        let body = try await request.decodeJSON(as: PatchPostRequest.self, context: context)
        let patch = PostPatch(
            title: body.title, body: body.body, weatherType: body.weatherType, category: body.category, mediaIDs: try Self.mediaIDs(body.mediaIds)
        )
        let precondition = PostETag.precondition(ifMatch: request.headers[values: .ifMatch], postID: id)
        let post = try await posts.update(id: id, patch: patch, precondition: precondition, by: caller)
        var response = jsonResponse(PostResponse(post, viewer: context.viewer, language: request.language, media: mediaURLs.links(request, context)))
        response.headers[.eTag] = PostETag.value(post)
        return response
    }

    /// `mediaIds` as sent: ids are canonical decimal strings; anything else names no media (422 naming `mediaIds`).
    static func mediaIDs(_ raw: [String]?) throws -> [Int]? {
        try raw.map { ids in
            try ids.map { text in
                guard let id = CanonicalID.parse(text) else { throw APIError.invalidField("mediaIds", "'\(text.prefix(40))' is not a media id") }
                return id
            }
        }
    }

    @Sendable func markHelpful(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let state = try await posts.markHelpful(id: try context.pathID("id", "post"), by: caller)
        return jsonResponse(HelpfulResponse(helpfulCount: state.helpfulCount, helpedByMe: state.helpedByMe))
    }

    @Sendable func unmarkHelpful(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let state = try await posts.unmarkHelpful(id: try context.pathID("id", "post"), by: caller)
        return jsonResponse(HelpfulResponse(helpfulCount: state.helpfulCount, helpedByMe: state.helpedByMe))
    }

    @Sendable func delete(_ request: Request, context: AppRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let id = try context.pathID("id", "post")
        try await posts.delete(id: id, by: caller)
        return noContent()
    }
}

/// A post's entity tag: strong and opaque to clients, made of the post's id and its edit version
/// (`"<id>-<version>"`), so it changes with every edit and a tag of one post never matches another.
enum PostETag {
    static func value(_ post: Post) -> String {
        value(id: post.id, version: post.version)
    }

    /// The tag of any versioned resource (posts, replies): `"<id>-<version>"`.
    static func value(id: Int, version: Int) -> String {
        "\"\(id)-\(version)\""
    }

    /// `If-Match` as the edit's precondition: nil when absent, `.any` for `*`, else the versions of this
    /// post the listed tags name. Weak tags (`W/"…"`) never match (RFC 9110 compares strongly), and a tag
    /// that is not one of ours names no version, so such a header fails the precondition (412).
    /// A percent-encoded field (`%2242-3%22`) is read decoded: OpenAPI 3.0 clients such as Apple's
    /// swift-openapi-generator percent-encode header parameters (style `simple`), quotes included.
    static func precondition(ifMatch fields: [String], postID: Int) -> VersionPrecondition? {
        guard !fields.isEmpty else { return nil }
        var versions: [Int] = []
        for field in fields {
            let field = field.contains("%") ? (field.removingPercentEncoding ?? field) : field
            for member in field.split(separator: ",") {
                let tag = member.trimmingCharacters(in: .whitespaces)
                if tag == "*" { return .any }
                guard tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else { continue }
                let parts = tag.dropFirst().dropLast().split(separator: "-", omittingEmptySubsequences: false)
                guard parts.count == 2, CanonicalID.parse(parts[0]) == postID, let version = CanonicalID.parse(parts[1]) else { continue }
                versions.append(version)
            }
        }
        return .oneOf(versions)
    }
}
