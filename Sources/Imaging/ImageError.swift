/// Why an upload was not turned into a `ProcessedImage`. The HTTP status each maps to (CONTRACT §8) is
/// in its comment.
public enum ImageError: Error, Sendable, Equatable {
    /// Not JPEG, PNG, WebP or HEIC/HEIF by its first bytes (empty files too): 415 `unsupported_media_type`.
    case unsupported
    /// More pixels than allowed, found from the header alone, before any decoding: 422 `invalid_field` (`file`).
    case tooManyPixels(width: Int, height: Int)
    /// The decoder refused it (truncated, corrupt): 422 `invalid_field` (`file`). The text is libvips'
    /// message, for logs only, not for clients.
    case undecodable(String)
    /// Decoding took longer than the processor's time limit: 422 `invalid_field` (`file`). Only a
    /// hostile or pathological file needs that long for at most 40 MP; a busy machine shows as `busy`.
    case timedOut
    /// Every decoding thread is busy and the queue is full: 503, with `Retry-After`.
    case busy
}
