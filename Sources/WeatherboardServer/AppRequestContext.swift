import Board
import Foundation
import Hummingbird
import NIOCore

/// Per-request state: the request id, the client's address, and (once authenticated) who is calling.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The TCP peer; the client address for rate limits unless a trusted proxy says otherwise.
    public let remoteAddress: SocketAddress?
    /// Echoed or generated `X-Request-Id`, set by `RequestEnvelopeMiddleware`.
    public var requestID: String = ""
    /// The client's IP as rate limits see it, set by `AuthenticationMiddleware`.
    public var clientIP: String = "unknown"
    /// The caller behind the bearer token, if one was sent (and valid).
    public var identity: Identity?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
    }

    /// Bodies above 64 KiB answer 413 `payload_too_large`.
    public var maxUploadSize: Int { 64 * 1024 }

    public var requestDecoder: JSONDecoder { JSONCoding.decoder }
    public var responseEncoder: JSONEncoder { JSONCoding.encoder }

    /// The caller, or 401 `unauthenticated`.
    public func requireIdentity() throws -> Identity {
        guard let identity else { throw BoardError.unauthenticated }
        return identity
    }

    public var viewer: Viewer { Viewer(identity) }
}

/// The JSON settings of the contract: RFC 3339 UTC times with `Z`.
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
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

/// `2026-11-22T09:30:00Z`.
enum RFC3339 {
    static func format(_ date: Date) -> String {
        var seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        var days = seconds / 86_400
        seconds -= days * 86_400
        if seconds < 0 {
            seconds += 86_400
            days -= 1
        }
        // Howard Hinnant's civil-from-days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        var bytes = [UInt8](repeating: 0, count: 20)
        func put(_ value: Int64, _ at: Int, _ width: Int) {
            var v = value
            for i in stride(from: at + width - 1, through: at, by: -1) {
                bytes[i] = UInt8(48 + v % 10)
                v /= 10
            }
        }
        put(year, 0, 4)
        bytes[4] = 45
        put(month, 5, 2)
        bytes[7] = 45
        put(day, 8, 2)
        bytes[10] = 84
        put(seconds / 3600, 11, 2)
        bytes[13] = 58
        put(seconds / 60 % 60, 14, 2)
        bytes[16] = 58
        put(seconds % 60, 17, 2)
        bytes[19] = 90
        return String(decoding: bytes, as: UTF8.self)
    }
}
