import ArgumentParser
import Foundation
import WeatherboardAPI

/// `queue [--limit N] [--cursor C] [--json]`: posts with open reports, oldest first.
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "queue", abstract: "List posts with open reports, oldest report first.")

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

    static func table(_ items: [QueueItemResponse], now: Date = Date()) -> TableRenderer {
        var table = TableRenderer([
            .init(title: "POST"), .init(title: "STATUS"), .init(title: "REPORTS", alignRight: true), .init(title: "REASONS"),
            .init(title: "AGE", alignRight: true), .init(title: "TRUSTED", alignRight: true), .init(title: "EXCERPT"),
        ])
        for item in items {
            table.add([
                item.post.id,
                item.post.status ?? "visible",
                String(item.openReportCount),
                TextLayout.truncate(TextLayout.reasons(item.reports.map(\.reason)), columns: 30),
                TextLayout.age(since: item.firstReportedAt, now: now),
                // Trusted helpful marks: a popular post against a brigaded one.
                item.post.trustedHelpfulCount.map(String.init) ?? "-",
                TextLayout.excerpt(title: item.post.title, body: item.post.body, columns: 48),
            ])
        }
        return table
    }
}
