import ArgumentParser
import Foundation
import WeatherboardAPI

/// `search <text> [--limit N] [--cursor C] [--json]`: the posts holding every word of the text, every status but
/// deleted, newest first (CONTRACT §10; a moderator chasing a spam wave searches for its link).
struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Find posts by their words (every status but deleted, newest first).",
        discussion: """
            Every whitespace-separated word must appear in the post's title, body or image alt text, inside words too \
            (파전 finds 김치파전에), after the term filter's folding (case, width, zero-width characters). As a moderator \
            you find hidden, held and removed posts too; the STATUS column says which. Deleted posts are read by id \
            (show) and in the queue.
            """
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var listing: ListingOptions
    @Argument(help: "The words to look for (1–100 characters).") var text: String

    mutating func run() async throws {
        let (options, listing, text) = (options, listing, text)
        try await CommandRunner.run {
            let client = try AdminSession.client(options)
            let result = try await client.collect(limit: listing.limit, cursor: listing.cursor) { try await client.searchPage(text, limit: $0, cursor: $1) }
            try Listing.show(result, options: listing, command: "search", empty: "no post holds every word of “\(text)”", table: Self.table)
        }
    }

    static func table(_ posts: [PostResponse]) -> TableRenderer {
        var table = TableRenderer([
            .init(title: "POST"), .init(title: "STATUS"), .init(title: "CREATED"), .init(title: "AUTHOR"), .init(title: "TEXT"),
        ])
        for post in posts {
            let text = [post.title, post.body].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " — ")
            table.add([
                post.id, post.status ?? "visible", TextLayout.timestamp(post.createdAt), "\(post.author.displayName) (\(post.author.id))",
                TextLayout.truncate(TextLayout.singleLine(text), columns: 60),
            ])
        }
        return table
    }
}

extension AdminClient {
    func searchPage(_ text: String, limit: Int, cursor: String?) async throws -> (Page<PostResponse>, [UInt8]) {
        var query = [("q", text), ("limit", String(limit))]
        if let cursor { query.append(("cursor", cursor)) }
        return try await get("/v1/posts", query: query, as: Page<PostResponse>.self)
    }
}
