import MediaStorage

/// Where a media object's two files live in the store: `public/<key>.jpg` and `public/<key>-preview.jpg`
/// while they may be shown (the public base URL serves `public/`), `private/…` while its post is hidden,
/// removed or deleted (only moderators read them, through the server).
public struct MediaFiles: Sendable {
    public let store: any MediaStore

    public init(store: any MediaStore) {
        self.store = store
    }

    public enum Variant: Sendable {
        case full, preview

        var suffix: String { self == .full ? ".jpg" : "-preview.jpg" }
    }

    /// The prefix of the public side: what the public base URL (or nginx, or the server's `/media/`) serves.
    public static let publicPrefix = "public/"

    static func path(_ key: String, _ variant: Variant, isPublic: Bool) -> String {
        (isPublic ? publicPrefix : "private/") + key + variant.suffix
    }

    /// The file's name under the public base URL.
    public static func publicName(_ key: String, _ variant: Variant) -> String {
        key + variant.suffix
    }

    func put(_ key: String, full: [UInt8], preview: [UInt8]) async throws {
        try await store.put(Self.path(key, .full, isPublic: true), full, contentType: Media.contentType)
        try await store.put(Self.path(key, .preview, isPublic: true), preview, contentType: Media.contentType)
    }

    /// Moves both files to the public or the private side.
    func setPublic(_ key: String, _ isPublic: Bool) async throws {
        for variant in [Variant.full, .preview] {
            try await store.move(Self.path(key, variant, isPublic: !isPublic), to: Self.path(key, variant, isPublic: isPublic))
        }
    }

    /// Deletes both files on both sides (idempotent).
    func delete(_ key: String) async throws {
        for variant in [Variant.full, .preview] {
            for side in [true, false] {
                try await store.delete(Self.path(key, variant, isPublic: side))
            }
        }
    }

    func read(_ media: Media, _ variant: Variant) async throws -> [UInt8]? {
        if let bytes = try await store.get(Self.path(media.storageKey, variant, isPublic: media.isPublic)) { return bytes }
        // A sync may have moved it a moment ago.
        return try await store.get(Self.path(media.storageKey, variant, isPublic: !media.isPublic))
    }
}
