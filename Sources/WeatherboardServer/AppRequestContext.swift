import Foundation
import Hummingbird
import NIOCore

/// Per-request state: the request id, the socket peer, and (once authenticated) who is calling.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP peer; the client address for rate limits unless a trusted proxy says otherwise.
    public let remoteAddress: SocketAddress?
    /// Echoed or generated `X-Request-Id`, set by `RequestEnvelopeMiddleware`.
    public var requestID: String = ""

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }

    /// Bodies above 64 KiB answer 413 `payload_too_large`.
    public var maxUploadSize: Int { 64 * 1024 }

    public var requestDecoder: JSONDecoder { JSONCoding.decoder }
    public var responseEncoder: JSONEncoder { JSONCoding.encoder }
}

/// The JSON settings of the contract: RFC 3339 UTC times with `Z`.
enum JSONCoding {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}
