import ArgumentParser
import Foundation
import WeatherboardAPI

/// `show <postId> [--json]`: a post, its revisions and its open reports.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show a post with its revisions and open reports.",
        discussion: """
            With --json prints {"post", "reports", "openReportCount", "firstReportedAt"}: the queue item, or for a \
            post without open reports the post with no reports and a null firstReportedAt.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The post's id.")
    var postId: String

    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false

    mutating func run() async throws {
        let (options, postId, json) = (options, postId, json)
        try await CommandRunner.run {
            let client = try AdminSession.client(options)
            // The queue carries the revisions and the reports; walk it to find the post.
            var cursor: String? = nil
            repeat {
                let (page, raw) = try await client.queuePage(limit: 100, cursor: cursor)
                if let index = page.items.firstIndex(where: { $0.post.id == postId }) {
                    let item = page.items[index]
                    if json {
                        let object = try JSONSerialization.jsonObject(with: Data(raw)) as? [String: Any]
                        let items = object?["items"] as? [Any] ?? []
                        Console.raw([UInt8](try JSONSerialization.data(withJSONObject: items[index], options: [.sortedKeys, .withoutEscapingSlashes])))
                    } else {
                        Console.out(PostPrinter.render(post: item.post, reports: item.reports))
                    }
                    return
                }
                cursor = page.nextCursor
            } while cursor != nil

            let (post, raw) = try await client.post(id: postId)
            if json {
                let object = try JSONSerialization.jsonObject(with: Data(raw))
                let item: [String: Any] = ["post": object, "reports": [Any](), "openReportCount": 0, "firstReportedAt": NSNull()]
                Console.raw([UInt8](try JSONSerialization.data(withJSONObject: item, options: [.sortedKeys, .withoutEscapingSlashes])))
            } else {
                Console.out(PostPrinter.render(post: post, reports: []))
            }
        }
    }
}
