import Imaging
import MediaStorage

extension APIError {
    /// The contract's answer for each way an upload can fail to become an image (CONTRACT §8).
    init(_ error: ImageError) {
        switch error {
        case .unsupported:
            self.init(.unsupportedMediaType, "unsupported_media_type", "file: send a JPEG, PNG, WebP or HEIC/HEIF image")
        case .tooManyPixels(let width, let height):
            self = .invalidField("file", "has \(width)×\(height) pixels; at most 40 megapixels are accepted")
        case .undecodable:
            self = .invalidField("file", "could not be decoded as an image")
        case .timedOut:
            self = .invalidField("file", "took too long to decode")
        case .busy:
            // Every decoding thread busy and the queue full, like the password-hashing queue: come back in a second.
            self.init(.tooManyRequests, "rate_limited", "too many images are being processed; try again in 1 s", retryAfter: 1)
        }
    }

    /// The media store (directory or S3) failed: the request can be retried.
    init(_ error: MediaStoreError) {
        self.init(.serviceUnavailable, "media_unavailable", "the media store is unavailable; try again shortly", retryAfter: 5)
    }
}
