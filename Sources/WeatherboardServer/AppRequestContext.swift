import Board
import WeatherboardAPI
import Foundation
import Hummingbird
import NIOCore
import Vocabulary

/// Per-request state: the request id, the client's address, and (once authenticated) who is calling.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection; an early answer closes it (`EarlyAnswerMiddleware`).
    public let channel: any Channel
    /// The TCP peer; the client address for rate limits unless a trusted proxy says otherwise.
    public var remoteAddress: SocketAddress? { channel.remoteAddress }
    /// The peer is in `TRUSTED_PROXIES`, so its `X-Forwarded-*` and `Host` are believed; set by `AuthenticationMiddleware`.
    public var viaTrustedProxy = false
    /// Echoed or generated `X-Request-Id`, set by `RequestEnvelopeMiddleware`.
    public var requestID: String = ""
    /// The client as rate limits see it (an IPv4 address or an IPv6 /64), set by `AuthenticationMiddleware`.
    public var clientIP: String = "unknown"
    /// The request's bearer token, checked by the request's own statement: a read's (`SessionGate`), a write's first
    /// statement in its transaction (`Caller`); or by `requireIdentity` and `checkedViewer`. `AuthenticationMiddleware`
    /// checks one nothing checked before answering.
    public var gate: SessionGate?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }

    /// The largest request body other than an upload (CONTRACT §1); larger ones answer 413 `payload_too_large`.
    public static let maxBodyBytes = 64 * 1024
    /// The limit Hummingbird applies while collecting a body (chunked bodies included).
    public var maxUploadSize: Int { Self.maxBodyBytes }

    public var requestDecoder: JSONDecoder { JSONCoding.decoder }
    public var responseEncoder: JSONEncoder { JSONCoding.encoder }

    /// The caller, or 401 `unauthenticated`: the token is checked now, by a statement of its own, unless a statement
    /// of the request has checked it.
    public func requireIdentity() async throws -> Identity {
        if let gate { return try await gate.resolve() }
        throw BoardError.unauthenticated
    }

    /// The caller of a write that checks the token inside its own transaction (`Caller`), or 401 `unauthenticated` at
    /// once when no token was sent. Nothing is checked yet.
    public func requireCaller() throws -> Caller {
        guard let gate else { throw BoardError.unauthenticated }
        return Caller(gate)
    }

    /// A token sent to a route that acts for no account (creating one, signing in) must still be live: checked now,
    /// by a statement of its own, before anything is done.
    public func refuseRevokedToken() async throws {
        if let gate { _ = try await gate.resolve() }
    }

    /// The reader, for the reads that check a token themselves (`SessionGate.read`: the post, the lists, the feed,
    /// the outfit posts, replies, the inbox) and, after one of them, for what the answer shows: a token still to be
    /// checked is passed on unchecked (`Viewer.gate`).
    public var viewer: Viewer {
        if let gate { return Viewer(gate: gate) }
        return .anonymous
    }

    /// The reader with its token checked (a statement of its own unless a read has checked it), for everything else.
    public func checkedViewer() async throws -> Viewer {
        if let gate { return Viewer(try await gate.resolve()) }
        return .anonymous
    }
}

/// The JSON settings of the contract: RFC 3339 UTC times with `Z` out; any RFC 3339 time in (`Vocabulary.RFC3339`).
enum JSONCoding {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        // RFC 3339 in UTC with `Z`, to the second: a hand-rolled formatter, as ISO8601DateFormatter is slow.
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.format(date))
        }
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            guard let date = RFC3339.parse(try container.decode(String.self)) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an RFC 3339 time")
            }
            return date
        }
        return decoder
    }()
}

