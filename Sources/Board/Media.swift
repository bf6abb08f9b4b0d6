import Foundation

/// An image on a post (CONTRACT §8), as stored: the server's own JPEG and preview, under an unguessable key.
public struct Media: Sendable, Equatable {
    public var id: Int
    public var ownerID: Int
    public var postID: Int?
    /// Random, `[a-z0-9]`; the files are `<key>.jpg` and `<key>-preview.jpg` (see `MediaFiles`).
    public var storageKey: String
    /// Whether its files are where the public URLs point (false while its post is hidden, removed or deleted).
    public var isPublic: Bool
    public var width: Int
    public var height: Int
    public var byteSize: Int
    public var blurhash: String
    public var alt: String?
    public var createdAt: Date
    /// Kept only as evidence for a report (its owner took it off, or deleted the account): nobody's to use.
    public var isRetired: Bool

    public init(
        id: Int, ownerID: Int, postID: Int?, storageKey: String, isPublic: Bool, width: Int, height: Int, byteSize: Int,
        blurhash: String, alt: String?, createdAt: Date, isRetired: Bool = false
    ) {
        self.id = id
        self.ownerID = ownerID
        self.postID = postID
        self.storageKey = storageKey
        self.isPublic = isPublic
        self.width = width
        self.height = height
        self.byteSize = byteSize
        self.blurhash = blurhash
        self.alt = alt
        self.createdAt = createdAt
        self.isRetired = isRetired
    }

    /// Every saved image is a JPEG.
    public static let contentType = "image/jpeg"
}
