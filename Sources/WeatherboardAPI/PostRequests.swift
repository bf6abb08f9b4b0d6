/// `POST /v1/posts`: `regionId`, or `location` to snap to the nearest region.
public struct CreatePostRequest: Codable, Sendable {
    public struct Location: Codable, Sendable {
        public var lat: Double
        public var lon: Double
        public init(lat: Double, lon: Double) {
            self.lat = lat
            self.lon = lon
        }
    }

    public var weatherType: String
    public var category: String
    public var title: String?
    public var body: String
    public var regionId: String?
    public var location: Location?
    /// Up to 4 of the caller's unattached media, in display order.
    public var mediaIds: [String]?

    public init(
        weatherType: String, category: String, title: String? = nil, body: String, regionId: String? = nil, location: Location? = nil,
        mediaIds: [String]? = nil
    ) {
        self.mediaIds = mediaIds
        self.weatherType = weatherType
        self.category = category
        self.title = title
        self.body = body
        self.regionId = regionId
        self.location = location
    }
}

/// `PATCH /v1/posts/{id}`: absent fields stay; `"title": null` (or `""`) removes the title.
public struct PatchPostRequest: Codable, Sendable {
    public var title: String??
    public var body: String?
    public var weatherType: String?
    public var category: String?
    /// Replaces the post's media (media left off it is deleted).
    public var mediaIds: [String]?

    enum CodingKeys: String, CodingKey {
        case title, body, weatherType, category, mediaIds
    }

    public init(title: String?? = nil, body: String? = nil, weatherType: String? = nil, category: String? = nil, mediaIds: [String]? = nil) {
        self.mediaIds = mediaIds
        self.title = title
        self.body = body
        self.weatherType = weatherType
        self.category = category
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if c.contains(.title) {
            title = .some(try c.decodeNil(forKey: .title) ? nil : try c.decode(String.self, forKey: .title))
        } else {
            title = .none
        }
        // Only the title may be null; `"body": null` is a mistake, not "leave it alone".
        body = c.contains(.body) ? try c.decode(String.self, forKey: .body) : nil
        weatherType = c.contains(.weatherType) ? try c.decode(String.self, forKey: .weatherType) : nil
        category = c.contains(.category) ? try c.decode(String.self, forKey: .category) : nil
        mediaIds = c.contains(.mediaIds) ? try c.decode([String].self, forKey: .mediaIds) : nil
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if let title { try c.encode(title, forKey: .title) }
        try c.encodeIfPresent(body, forKey: .body)
        try c.encodeIfPresent(weatherType, forKey: .weatherType)
        try c.encodeIfPresent(mediaIds, forKey: .mediaIds)
        try c.encodeIfPresent(category, forKey: .category)
    }
}
