import Foundation

/// A media object (CONTRACT §8): the server's own JPEG and its preview, with absolute URLs.
public struct MediaResponse: Codable, Sendable, Equatable {
    public var id: String
    public var url: String
    public var previewUrl: String
    public var width: Int
    public var height: Int
    public var blurhash: String
    public var alt: String?
    public var contentType: String
    public var byteSize: Int
    public var createdAt: Date

    public init(
        id: String, url: String, previewUrl: String, width: Int, height: Int, blurhash: String, alt: String?, contentType: String,
        byteSize: Int, createdAt: Date
    ) {
        self.id = id
        self.url = url
        self.previewUrl = previewUrl
        self.width = width
        self.height = height
        self.blurhash = blurhash
        self.alt = alt
        self.contentType = contentType
        self.byteSize = byteSize
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case id, url, previewUrl, width, height, blurhash, alt, contentType, byteSize, createdAt
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(url, forKey: .url)
        try c.encode(previewUrl, forKey: .previewUrl)
        try c.encode(width, forKey: .width)
        try c.encode(height, forKey: .height)
        try c.encode(blurhash, forKey: .blurhash)
        try c.encode(alt, forKey: .alt)  // null when absent
        try c.encode(contentType, forKey: .contentType)
        try c.encode(byteSize, forKey: .byteSize)
        try c.encode(createdAt, forKey: .createdAt)
    }
}

/// `PATCH /v1/media/{id}`: `alt` (null or "" removes it).
public struct PatchMediaRequest: Codable, Sendable {
    public var alt: String?

    public init(alt: String?) {
        self.alt = alt
    }

    enum CodingKeys: String, CodingKey {
        case alt
    }

    /// `alt` must be sent (null to remove it): `{}` says nothing and is refused (422 naming `alt`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard c.contains(.alt) else {
            throw DecodingError.keyNotFound(CodingKeys.alt, .init(codingPath: [], debugDescription: "alt is required"))
        }
        alt = try c.decodeNil(forKey: .alt) ? nil : try c.decode(String.self, forKey: .alt)
    }
}
