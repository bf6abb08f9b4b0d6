import ArgumentParser
import Foundation
import WeatherboardAPI

/// `queue [--limit N] [--cursor C] [--json]`: posts with open reports, oldest first.
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "queue", abstract: "List posts with open reports, oldest report first.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "How many posts to list.")
    var limit = 20

    @Option(name: .long, help: "Continue after this cursor (a previous page's nextCursor).")
    var cursor: String?

    @Flag(name: .long, help: "Print the page as JSON: {\"items\": [...], \"nextCursor\": ...}.")
    var json = false

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be at least 1") }
    }

    mutating func run() async throws {
        let (options, limit, cursor, json) = (options, limit, cursor, json)
        try await CommandRunner.run {
            let client = try AdminSession.client(options)
            let result = try await client.collect(limit: limit, cursor: cursor) { try await client.queuePage(limit: $0, cursor: $1) }
            if json {
                try JSONPages.print(result.raw, nextCursor: result.nextCursor)
                return
            }
            if result.items.isEmpty {
                Console.out("the queue is empty")
                return
            }
            Console.out(Self.table(result.items).render())
            if let next = result.nextCursor {
                Console.out("more: weatherboard-admin queue --cursor \(next)")
            }
        }
    }

    static func table(_ items: [QueueItemResponse], now: Date = Date()) -> TableRenderer {
        var table = TableRenderer([
            .init(title: "POST"), .init(title: "STATUS"), .init(title: "REPORTS", alignRight: true), .init(title: "REASONS"),
            .init(title: "AGE", alignRight: true), .init(title: "EXCERPT"),
        ])
        for item in items {
            table.add([
                item.post.id,
                item.post.status ?? "visible",
                String(item.openReportCount),
                TextLayout.truncate(TextLayout.reasons(item.reports.map(\.reason)), columns: 30),
                TextLayout.age(since: item.firstReportedAt, now: now),
                TextLayout.excerpt(title: item.post.title, body: item.post.body, columns: 48),
            ])
        }
        return table
    }
}
