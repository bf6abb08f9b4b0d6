import Foundation
import WeatherboardAPI

/// The long form of a reply for `show reply:<id>` and `review`: the reply, the post it answers (for context), its
/// revisions and its open reports. The context line starts `post <id>` as a post's own first line does, so a script
/// that skips items by their `post ` line (as `review`'s scripts do) sees exactly one such line for each item.
enum ReplyPrinter {
    /// `post` is nil when the post could not be read (the reply's `postId` is still shown).
    static func render(reply: ReplyResponse, post: PostResponse?, reports: [QueueReportResponse], now: Date = Date()) -> String {
        var lines: [String] = []
        lines.append("reply \(reply.id)  [\(reply.status ?? "visible")]  on post \(reply.postId)")
        lines.append(
            "author \(TextLayout.singleLine(reply.author.displayName)) (account \(reply.author.id))"
                + (reply.isPostAuthor ? " (the post's author)" : "")
                + "  replied \(TextLayout.timestamp(reply.createdAt)) (\(TextLayout.age(since: reply.createdAt, now: now)) ago)"
                + (reply.edited ? "  edited \(TextLayout.timestamp(reply.updatedAt))" : "")
        )
        lines.append(contentsOf: PostPrinter.indented(reply.body))

        lines.append("")
        if let post {
            lines.append(
                "post \(post.id)  [\(post.status ?? "visible")]  by \(TextLayout.singleLine(post.author.displayName)) (account \(post.author.id))  "
                    + TextLayout.excerpt(title: post.title, body: post.body, columns: 60)
            )
        } else {
            lines.append("post \(reply.postId)  (not readable)")
        }

        if let revisions = reply.revisions, !revisions.isEmpty {
            lines.append("")
            lines.append("revisions (\(revisions.count), oldest first):")
            for (index, revision) in revisions.enumerated() {
                lines.append("  \(index + 1). replaced \(TextLayout.timestamp(revision.replacedAt))")
                lines.append(contentsOf: PostPrinter.indented(revision.body, by: "     "))
            }
        }

        lines.append("")
        lines.append(contentsOf: PostPrinter.openReports(reports, title: nil, body: reply.body, now: now))
        return lines.joined(separator: "\n")
    }
}
