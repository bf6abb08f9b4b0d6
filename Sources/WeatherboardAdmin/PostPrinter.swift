import Foundation
import WeatherboardAPI

/// The long form of a post for `show` and `review`: the post, its revisions and its open reports (a reply's: `ReplyPrinter`).
enum PostPrinter {
    static func render(post: PostResponse, reports: [QueueReportResponse], now: Date = Date()) -> String {
        var lines: [String] = []
        let status = post.status ?? "visible"
        lines.append("post \(post.id)  [\(status)]  \(post.weatherType)/\(post.category)  \(post.region.name) (\(post.region.countryCode))")
        lines.append(
            "author \(post.author.displayName) (account \(post.author.id))  posted \(TextLayout.timestamp(post.createdAt)) (\(TextLayout.age(since: post.createdAt, now: now)) ago)"
                + (post.edited ? "  edited \(TextLayout.timestamp(post.updatedAt))" : "")
        )
        lines.append(conditions(of: post))
        lines.append("helpful marks: \(post.helpfulCount)" + (post.trustedHelpfulCount.map { " (\($0) trusted)" } ?? ""))
        if let title = post.title, !title.isEmpty {
            lines.append("title: \(TextLayout.singleLine(title))")
        }
        lines.append(contentsOf: indented(post.body))
        if !post.media.isEmpty {
            lines.append("media (\(post.media.count); save one with `weatherboard-admin media get <id>`):")
            for media in post.media {
                let alt = media.alt.map { "  alt “\(TextLayout.truncate(TextLayout.singleLine($0), columns: 50))”" } ?? "  no alt text"
                lines.append("  - media \(media.id)  \(media.width)×\(media.height)  \(TextLayout.bytes(media.byteSize))\(alt)")
                lines.append("    \(media.url)")
            }
        }

        if let revisions = post.revisions, !revisions.isEmpty {
            lines.append("")
            lines.append("revisions (\(revisions.count), oldest first):")
            for (index, revision) in revisions.enumerated() {
                lines.append("  \(index + 1). replaced \(TextLayout.timestamp(revision.replacedAt))  \(revision.weatherType)/\(revision.category)")
                if let title = revision.title, !title.isEmpty { lines.append("     title: \(TextLayout.singleLine(title))") }
                lines.append(contentsOf: indented(revision.body, by: "     "))
            }
        }

        lines.append("")
        lines.append(contentsOf: openReports(reports, title: post.title, body: post.body, now: now))
        return lines.joined(separator: "\n")
    }

    /// The open reports of a post or a reply, with the text as reported when it differs from `title` and `body` now.
    static func openReports(_ reports: [QueueReportResponse], title: String?, body: String, now: Date) -> [String] {
        guard !reports.isEmpty else { return ["no open reports"] }
        var lines = ["open reports (\(reports.count)): \(TextLayout.reasons(reports.map(\.reason)))"]
        for report in reports {
            let reporter = report.reporterId.map { "account \($0)" } ?? "term filter"
            var line = "  - \(report.reason)  by \(reporter)  \(TextLayout.age(since: report.createdAt, now: now)) ago"
            if let note = report.note, !note.isEmpty { line += "  “\(TextLayout.truncate(TextLayout.singleLine(note), columns: 60))”" }
            lines.append(line)
            if report.reportedTitle != title || report.reportedBody != body {
                lines.append("    as reported: \(TextLayout.excerpt(title: report.reportedTitle, body: report.reportedBody, columns: 70))")
            }
        }
        return lines
    }

    /// The weather the post was written in (CONTRACT §9): what a moderator weighs a recommendation against.
    static func conditions(of post: PostResponse) -> String {
        guard let conditions = post.conditions else { return "conditions: none recorded" }
        return "conditions: \(conditions.weatherType.rawValue), feels like \(conditions.feelsLike) °C (\(conditions.band.rawValue)), observed "
            + TextLayout.timestamp(conditions.observedAt)
    }

    /// User text, made safe, a line each with `prefix` before it.
    static func indented(_ text: String, by prefix: String = "  ") -> [String] {
        TextLayout.safe(text).split(separator: "\n", omittingEmptySubsequences: false).map { prefix + $0 }
    }
}
