import Vocabulary

/// A feels-like band (CONTRACT §9), as `GET /v1/outfit-bands` lists it and the outfit guide shows it: bounds in °C
/// (lower inclusive, upper exclusive; `null` where the band is open), names and items localized.
public struct OutfitBandResponse: Decodable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var minFeelsLike: Double?
    public var maxFeelsLike: Double?
    public var items: [String]

    public init(id: String, name: String, minFeelsLike: Double?, maxFeelsLike: Double?, items: [String]) {
        self.id = id
        self.name = name
        self.minFeelsLike = minFeelsLike
        self.maxFeelsLike = maxFeelsLike
        self.items = items
    }

    public init(_ band: FeelsLikeBand, language: Language) {
        self.init(
            id: band.rawValue, name: band.name(in: language), minFeelsLike: band.minFeelsLike, maxFeelsLike: band.maxFeelsLike,
            items: band.items(in: language)
        )
    }
}

/// Something to take along (CONTRACT §9's `carry`).
public struct CarryResponse: Decodable, Sendable, Equatable {
    public var id: String
    public var name: String

    public init(_ item: CarryItem, language: Language) {
        self.id = item.rawValue
        self.name = item.name(in: language)
    }
}

/// `GET /v1/regions/{id}/outfit` and `GET /v1/outfit?lat=&lon=` (CONTRACT §9).
public struct OutfitResponse: Decodable, Sendable {
    public var region: RegionResponse
    public var currentWeather: CurrentWeather
    public var band: OutfitBandResponse
    public var carry: [CarryResponse]
    public var posts: Page<PostResponse>

    public init(region: RegionResponse, currentWeather: CurrentWeather, band: OutfitBandResponse, carry: [CarryResponse], posts: Page<PostResponse>) {
        self.region = region
        self.currentWeather = currentWeather
        self.band = band
        self.carry = carry
        self.posts = posts
    }
}

extension OutfitBandResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("id", first: true)
        w.string(id)
        w.key("items")
        w.raw("[")
        for (i, item) in items.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(item)
        }
        w.raw("]")
        w.key("maxFeelsLike")
        w.optionalDouble(maxFeelsLike)
        w.key("minFeelsLike")
        w.optionalDouble(minFeelsLike)
        w.key("name")
        w.string(name)
        w.raw("}")
    }
}

extension CarryResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("id", first: true)
        w.string(id)
        w.key("name")
        w.string(name)
        w.raw("}")
    }
}

extension OutfitResponse: JSONWritable {
    public var jsonCapacity: Int { 1500 + posts.jsonCapacity }

    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("band", first: true)
        band.write(to: &w)
        w.key("carry")
        w.array(carry)
        w.key("currentWeather")
        currentWeather.write(to: &w)
        w.key("posts")
        posts.write(to: &w)
        w.key("region")
        region.write(to: &w)
        w.raw("}")
    }
}
