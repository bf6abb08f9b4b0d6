import ArgumentParser
import Foundation
import WeatherboardAPI

/// `log [--limit N] [--cursor C] [--json]`: moderator actions, newest first.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "log", abstract: "List moderator actions, newest first.")

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "How many entries to list.")
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
            let result = try await client.collect(limit: limit, cursor: cursor) { try await client.logPage(limit: $0, cursor: $1) }
            if json {
                try JSONPages.print(result.raw, nextCursor: result.nextCursor)
                return
            }
            if result.items.isEmpty {
                Console.out("the log is empty")
                return
            }
            var table = TableRenderer([
                .init(title: "TIME"), .init(title: "MODERATOR"), .init(title: "ACTION"), .init(title: "TARGET"), .init(title: "NOTE"),
            ])
            for entry in result.items {
                table.add([
                    TextLayout.timestamp(entry.createdAt),
                    entry.moderatorId ?? "operator",
                    entry.action,
                    "\(entry.targetType) \(entry.targetId)",
                    TextLayout.truncate(TextLayout.singleLine(entry.note ?? ""), columns: 50),
                ])
            }
            Console.out(table.render())
            if let next = result.nextCursor {
                Console.out("more: weatherboard-admin log --cursor \(next)")
            }
        }
    }
}
