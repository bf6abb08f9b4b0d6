import ArgumentParser
import Foundation
import WeatherboardAPI

/// `queue [--limit N] [--cursor C] [--json]`: posts and replies with open reports, oldest first.
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "queue", abstract: "List posts and replies with open reports, oldest report first.")

    @OptionGroup var options: GlobalOptions
    @OptionGroup var listing: ListingOptions

    mutating func run() async throws {
        let (options, listing) = (options, listing)
        try await CommandRunner.run {
            let client = try AdminSession.client(options)
            let result = try await client.collect(limit: listing.limit, cursor: listing.cursor) { try await client.queuePage(limit: $0, cursor: $1) }
            try Listing.show(result, options: listing, command: "queue", empty: "the queue is empty") { Self.table($0) }
        }
    }

    /// A row an item: POST is the post, or the post a reply is on; TARGET what `show`, `dismiss`, `remove` and
    /// `restore` take (`post:12`, `reply:34`); STATUS, TRUSTED and EXCERPT are the target's (a reply has no marks).
    static func table(_ items: [QueueItemResponse], now: Date = Date()) -> TableRenderer {
        var table = TableRenderer([
            .init(title: "POST"), .init(title: "TARGET"), .init(title: "STATUS"), .init(title: "REPORTS", alignRight: true), .init(title: "REASONS"),
            .init(title: "AGE", alignRight: true), .init(title: "TRUSTED", alignRight: true), .init(title: "EXCERPT"),
        ])
        for item in items {
            table.add([
                item.post.id,
                item.subject?.description ?? TextLayout.truncate(TextLayout.singleLine(item.target), columns: 20),
                item.subjectStatus,
                String(item.openReportCount),
                TextLayout.truncate(TextLayout.reasons(item.reports.map(\.reason)), columns: 30),
                TextLayout.age(since: item.firstReportedAt, now: now),
                // Trusted helpful marks: a popular post against a brigaded one.
                item.reportedReply == nil ? item.post.trustedHelpfulCount.map(String.init) ?? "-" : "-",
                item.excerpt(columns: 48),
            ])
        }
        return table
    }
}
