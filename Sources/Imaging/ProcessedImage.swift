/// An upload decoded and re-encoded: upright, sRGB, JPEG with no metadata at all.
public struct ProcessedImage: Sendable {
    /// JPEG, long side at most the processor's `maxSide`.
    public let full: [UInt8]
    /// JPEG, long side at most the processor's `previewSide`.
    public let preview: [UInt8]
    /// Size of `full`.
    public let width: Int
    public let height: Int
    /// Size of `preview`.
    public let previewWidth: Int
    public let previewHeight: Int
    /// BlurHash (4×3 components) of the preview's pixels.
    public let blurhash: String
    /// What the upload was.
    public let source: ImageFormat
}
