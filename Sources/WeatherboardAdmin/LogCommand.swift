import ArgumentParser
import Foundation
import WeatherboardAPI

/// `log [--limit N] [--cursor C] [--json]`: moderator actions, newest first.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "log", abstract: "List moderator actions, newest first.")

    @OptionGroup var options: GlobalOptions
    @OptionGroup var listing: ListingOptions

    mutating func run() async throws {
        let (options, listing) = (options, listing)
        try await CommandRunner.run {
            let client = try AdminSession.client(options)
            let result = try await client.collect(limit: listing.limit, cursor: listing.cursor) { try await client.logPage(limit: $0, cursor: $1) }
            try Listing.show(result, options: listing, command: "log", empty: "the log is empty", table: Self.table)
        }
    }

    static func table(_ entries: [ModerationLogResponse]) -> TableRenderer {
        var table = TableRenderer([
            .init(title: "TIME"), .init(title: "MODERATOR"), .init(title: "ACTION"), .init(title: "TARGET"), .init(title: "NOTE"),
        ])
        for entry in entries {
            table.add([
                TextLayout.timestamp(entry.createdAt),
                entry.moderatorId ?? "operator",
                entry.action,
                "\(entry.targetType) \(entry.targetId)",
                TextLayout.truncate(TextLayout.singleLine(entry.note ?? ""), columns: 50),
            ])
        }
        return table
    }
}
