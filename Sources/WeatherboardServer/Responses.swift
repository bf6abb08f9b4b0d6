import Board
import Foundation
import Hummingbird
import NIOCore
import Vocabulary
import WeatherboardAPI

extension AccountResponse {
    init(_ account: Account) {
        self.init(
            id: String(account.id), kind: account.kind.rawValue, username: account.username, displayName: account.displayName,
            role: account.role.rawValue, banned: account.banned, bannedUntil: account.bannedUntil, createdAt: account.createdAt
        )
    }
}

extension PostResponse {
    /// `status` is shown to the author and to moderators only.
    init(_ post: Post, viewer: Viewer, language: Language, media: MediaLinks, revisions: [PostRevision]? = nil) {
        let isMine = post.authorID == viewer.accountID
        self.init(
            id: String(post.id),
            weatherType: post.weatherType.rawValue,
            category: post.category.rawValue,
            title: post.title,
            body: post.body,
            region: .init(id: String(post.region.id), name: post.region.name(in: language), countryCode: post.region.countryCode),
            author: .init(id: String(post.authorID), displayName: post.authorDisplayName),
            createdAt: post.createdAt,
            updatedAt: post.updatedAt,
            edited: post.edited,
            isMine: isMine,
            media: post.media.map(media.response),
            status: post.status(shownTo: viewer)?.rawValue,
            revisions: revisions.map { $0.map(RevisionResponse.init) },
            conditions: post.conditions,
            helpfulCount: post.helpfulCount,
            helpedByMe: post.helpedByMe,
            trustedHelpfulCount: viewer.isModerator ? post.trustedHelpfulCount : nil,
            replyCount: post.replyCount
        )
    }
}

extension ReplyResponse {
    /// `status` is shown to the author and to moderators only; `post` (its post's id and title) in the inbox only.
    init(_ reply: Reply, viewer: Viewer, inbox: Bool = false, revisions: [ReplyRevision]? = nil) {
        self.init(
            id: String(reply.id),
            postId: String(reply.postID),
            body: reply.body,
            author: .init(id: String(reply.authorID), displayName: reply.authorDisplayName),
            isPostAuthor: reply.authorID == reply.postAuthorID,
            createdAt: reply.createdAt,
            updatedAt: reply.updatedAt,
            edited: reply.edited,
            isMine: reply.authorID == viewer.accountID,
            status: reply.status(shownTo: viewer)?.rawValue,
            post: inbox ? PostSummary(id: String(reply.postID), title: reply.postTitle) : nil,
            revisions: revisions.map { $0.map { ReplyRevisionResponse(body: $0.body, replacedAt: $0.replacedAt) } }
        )
    }
}

extension RevisionResponse {
    init(_ revision: PostRevision) {
        self.init(weatherType: revision.weatherType.rawValue, category: revision.category.rawValue, title: revision.title, body: revision.body, replacedAt: revision.replacedAt)
    }
}

/// A JSON response with a chosen status. Each wire type has one encoding, chosen here at compile time: the
/// hot types (posts, media, weather and what holds them) are `JSONWritable` and never `Encodable`; the rest
/// go through the shared `JSONEncoder`.
func jsonResponse(_ value: some JSONWritable, status: HTTPResponse.Status = .ok) -> Response {
    var writer = JSONWriter(capacity: value.jsonCapacity)
    value.write(to: &writer)
    return jsonResponse(bytes: writer.bytes, status: status)
}

func jsonResponse(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
    jsonResponse(bytes: try JSONCoding.encoder.encode(value), status: status)
}

private func jsonResponse(bytes: some Sequence<UInt8>, status: HTTPResponse.Status) -> Response {
    Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
}

/// 204 No Content.
func noContent() -> Response {
    Response(status: .noContent)
}
