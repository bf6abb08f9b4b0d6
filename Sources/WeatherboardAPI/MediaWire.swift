import Foundation

/// A media object (CONTRACT §8): the server's own JPEG and its preview, with absolute URLs.
public struct MediaResponse: Decodable, Sendable, Equatable {
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

extension MediaResponse: JSONWritable {
    /// The one encoding (keys sorted; `alt` is `null` when absent).
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("alt", first: true)
        w.optionalString(alt)
        w.key("blurhash")
        w.string(blurhash)
        w.key("byteSize")
        w.int(byteSize)
        w.key("contentType")
        w.string(contentType)
        w.key("createdAt")
        w.date(createdAt)
        w.key("height")
        w.int(height)
        w.key("id")
        w.string(id)
        w.key("previewUrl")
        w.string(previewUrl)
        w.key("url")
        w.string(url)
        w.key("width")
        w.int(width)
        w.raw("}")
    }
}
