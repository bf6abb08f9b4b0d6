import Board
import NIOCore
import Vocabulary
import WeatherboardAPI

/// The live board's messages on the wire (CONTRACT §11): each one a whole server-sent event, encoded once and shared
/// by every stream it goes to (`LiveBoard` calls this once per audience class).
struct StreamRenderer: LiveBoardRenderer {
    /// How a stream links media: the public base, or the moderators' origin (`MediaLinks`).
    struct Links: Hashable, Sendable {
        var moderatorOrigin: String?
        var base: String

        init(_ links: MediaLinks) {
            moderatorOrigin = links.moderatorOrigin
            base = links.base
        }
    }

    let urls: MediaURLs

    func render(_ content: LiveBoardContent, id: StreamPosition?, for audience: LiveBoardAudience?, links: Links?) -> ByteBuffer {
        let language = audience?.language ?? .ko
        let media = MediaLinks(urls: urls, moderatorOrigin: links?.moderatorOrigin, base: links?.base ?? "")
        switch content {
        case .post(let post, let change):
            let viewer = audience?.viewer(author: post.authorID) ?? .anonymous
            return Self.message(id: id, event: change.rawValue, PostResponse(post, viewer: viewer, language: language, media: media))
        case .removed(let postID):
            return Self.message(id: id, event: "remove", StreamRemovedEvent(id: String(postID)))
        case .reply(let reply):
            return Self.message(id: id, event: "reply", ReplyResponse(reply, viewer: audience?.viewer(author: reply.authorID) ?? .anonymous))
        case .replyRemoved(let replyID, let postID):
            return Self.message(id: id, event: "replyRemoved", StreamReplyRemovedEvent(id: String(replyID), postId: String(postID)))
        case .report(let item):
            return Self.message(
                id: id, event: "report", QueueItemResponse(item, viewer: Viewer(accountID: nil, isModerator: true), language: language, media: media)
            )
        case .resolved(let postID, let replyID, let action, let moderatorID):
            return Self.message(
                id: id, event: "resolved",
                QueueResolvedEvent(postId: String(postID), replyId: replyID.map(String.init), action: action, moderatorId: moderatorID.map(String.init))
            )
        case .reset:
            return Self.message(id: id, event: "reset", EmptyObject())
        }
    }

    struct EmptyObject: JSONWritable {
        func write(to w: inout JSONWriter) { w.raw("{}") }
    }

    /// One SSE message: `id:` (when given), `event:`, and the JSON on one `data:` line (JSON escapes every line break).
    static func message(id: StreamPosition?, event: String, _ value: some JSONWritable) -> ByteBuffer {
        var writer = JSONWriter(capacity: value.jsonCapacity)
        value.write(to: &writer)
        var buffer = ByteBuffer()
        buffer.reserveCapacity(writer.bytes.count + 64)
        if let id { buffer.writeString("id: \(id)\n") }
        buffer.writeString("event: \(event)\ndata: ")
        buffer.writeBytes(writer.bytes)
        buffer.writeString("\n\n")
        return buffer
    }
}
