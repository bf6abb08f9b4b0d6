import Foundation
import WeatherboardAPI

/// A queue item of either kind (CONTRACT §13): a post's, or a reply's carrying its post for context.
extension QueueItemResponse {
    /// The reply reported, in a reply's item.
    var reportedReply: ReplyResponse? { target == "reply" ? reply : nil }

    /// What the item is about; nil for a kind this version does not know (or a reply item without its reply).
    var subject: ModerationTarget? {
        if let reportedReply { return .reply(reportedReply.id) }
        return target == "post" ? .post(post.id) : nil
    }

    /// The subject's status (`visible` when the server did not say; `-` for a kind this version does not know).
    var subjectStatus: String {
        switch subject {
        case .reply: reportedReply?.status ?? "visible"
        case .post: post.status ?? "visible"
        case nil: "-"
        }
    }

    /// The author of what was reported: whom `review`'s `b` bans.
    var subjectAuthor: PostResponse.Author { reportedReply?.author ?? post.author }

    /// `title — body` of the post, or the reply's body, on one line cut to `columns`.
    func excerpt(columns: Int) -> String {
        if let reportedReply { return TextLayout.excerpt(title: nil, body: reportedReply.body, columns: columns) }
        return TextLayout.excerpt(title: post.title, body: post.body, columns: columns)
    }

    /// The long form `show` and `review` print.
    func rendered(now: Date = Date()) -> String {
        if let reportedReply { return ReplyPrinter.render(reply: reportedReply, post: post, reports: reports, now: now) }
        if subject != nil { return PostPrinter.render(post: post, reports: reports, now: now) }
        return "\(TextLayout.singleLine(target)) item on post \(post.id): this version of weatherboard-admin cannot show it"
    }
}
