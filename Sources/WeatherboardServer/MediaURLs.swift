import Board
import HTTPTypes
import Hummingbird
import NIOCore
import WeatherboardAPI

/// Absolute URLs for media objects (CONTRACT §8): public ones under `MEDIA_PUBLIC_BASE_URL` (default: this
/// server's own `/media/`, as the client reached it), moderators' under `/v1/moderation/media/{id}`.
struct MediaURLs: Sendable {
    /// `MEDIA_PUBLIC_BASE_URL`, ending in `/`; nil: this server's `/media/`.
    let publicBase: String?

    init(publicBase: String?) {
        self.publicBase = publicBase.map { $0.hasSuffix("/") ? $0 : $0 + "/" }
    }

    /// `scheme://host[:port]` as the client reached this server. Through a proxy in `TRUSTED_PROXIES`: the `Host` it
    /// forwards (checked to be a plain host and port), `https` when its `X-Forwarded-Proto` says so. From any other
    /// peer those headers are the client's own say, so they are not used: the address and port the connection came
    /// in on, over `http` (set `MEDIA_PUBLIC_BASE_URL` to publish another).
    static func origin(of request: Request, context: AppRequestContext) -> String {
        guard context.viaTrustedProxy else { return ownOrigin(context.channel.localAddress) }
        let host = request.head.authority.flatMap { value in
            value.utf8.allSatisfy({ byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte == 0x2e || byte == 0x2d || byte == 0x3a
                    || byte == 0x5b || byte == 0x5d
            }) && !value.isEmpty && value.utf8.count <= 255 ? value : nil
        } ?? "localhost"
        let scheme = Self.forwardedProto.flatMap { request.headers[$0] }?.lowercased() == "https" ? "https" : "http"
        return "\(scheme)://\(host)"
    }

    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")

    /// `http://address:port` of this end of a connection.
    static func ownOrigin(_ address: SocketAddress?) -> String {
        guard let address, let ip = address.ipAddress, let port = address.port else { return "http://localhost" }
        if case .v6 = address { return "http://[\(ip)]:\(port)" }
        return "http://\(ip):\(port)"
    }

    func base(for request: Request, context: AppRequestContext) -> String {
        publicBase ?? Self.origin(of: request, context: context) + "/media/"
    }

    /// The public form of a media object.
    func response(_ media: Media, base: String) -> MediaResponse {
        MediaResponse(
            id: String(media.id),
            url: base + MediaFiles.publicName(media.storageKey, .full),
            previewUrl: base + MediaFiles.publicName(media.storageKey, .preview),
            width: media.width, height: media.height, blurhash: media.blurhash, alt: media.alt, contentType: Media.contentType,
            byteSize: media.byteSize, createdAt: media.createdAt
        )
    }

    func response(_ media: Media, request: Request, context: AppRequestContext) -> MediaResponse {
        response(media, base: base(for: request, context: context))
    }

    /// How the media of the posts in one response are linked.
    func links(_ request: Request, _ context: AppRequestContext, moderator: Bool = false) -> MediaLinks {
        moderator
            ? MediaLinks(urls: self, moderatorOrigin: Self.origin(of: request, context: context), base: "")
            : MediaLinks(urls: self, moderatorOrigin: nil, base: base(for: request, context: context))
    }
}

/// One response's way of turning media into wire objects: public URLs, or the moderators' (queue, decisions).
struct MediaLinks: Sendable {
    let urls: MediaURLs
    let moderatorOrigin: String?
    let base: String

    /// What tells two readers' links apart (the stream hub renders a post once per distinct links).
    var cacheKey: String { (moderatorOrigin ?? "") + "\u{1}" + base }

    func response(_ media: Media) -> MediaResponse {
        guard let origin = moderatorOrigin else { return urls.response(media, base: base) }
        var response = urls.response(media, base: "")
        response.url = origin + "/v1/moderation/media/\(media.id)"
        response.previewUrl = response.url + "/preview"
        return response
    }
}
