import ArgumentParser
import Foundation
import WeatherboardAPI

/// `show <postId | post:<id> | reply:<id>> [--json]`: a post or a reply, its revisions and its open reports.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show a post (or reply:<id>) with its revisions and open reports.",
        discussion: """
            With --json prints the queue item: {"target", "post", "reports", "openReportCount", "firstReportedAt"}, and \
            "reply" for a reply (its "post" being the post it answers); for a post or reply without open reports, the \
            same object with no reports and a null firstReportedAt.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: ModerationTarget.help)
    var target: String

    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false

    func validate() throws {
        try ModerationTarget.validate(target)
    }

    mutating func run() async throws {
        let (options, target, json) = (options, target, json)
        try await CommandRunner.run {
            let target = try ModerationTarget(target)
            let client = try AdminSession.client(options)
            switch target {
            case .post(let id): try await Self.showPost(id, client: client, json: json)
            case .reply(let id): try await Self.showReply(id, client: client, json: json)
            }
        }
    }

    /// From the queue (which carries the revisions and the reports), else the post itself.
    private static func showPost(_ id: String, client: AdminClient, json: Bool) async throws {
        if let found = try await client.queueItem(.post(id)) {
            json ? Console.raw(found.json) : Console.out(found.item.rendered())
            return
        }
        let (post, raw) = try await client.post(id: id)
        if json {
            Console.raw(try unreported(["target": "post", "post": try JSONSerialization.jsonObject(with: Data(raw))]))
        } else {
            Console.out(PostPrinter.render(post: post, reports: []))
        }
    }

    /// The reply itself first (a reply that does not exist is "not found" at once), then its queue item if it has
    /// open reports; else its post, for context.
    private static func showReply(_ id: String, client: AdminClient, json: Bool) async throws {
        let (reply, replyRaw) = try await client.reply(id: id)
        if let found = try await client.queueItem(.reply(id)) {
            json ? Console.raw(found.json) : Console.out(found.item.rendered())
            return
        }
        // A post a moderator cannot read (gone from the database) leaves the reply shown without it.
        let post: (PostResponse, [UInt8])?
        do {
            post = try await client.post(id: reply.postId)
        } catch let error as AdminError where error.kind == .notFound {
            post = nil
        }
        if json {
            let postObject = try post.map { try JSONSerialization.jsonObject(with: Data($0.1)) } ?? NSNull()
            Console.raw(try unreported(["target": "reply", "reply": try JSONSerialization.jsonObject(with: Data(replyRaw)), "post": postObject]))
        } else {
            Console.out(ReplyPrinter.render(reply: reply, post: post?.0, reports: []))
        }
    }

    /// A queue item's shape for what has no open reports.
    private static func unreported(_ fields: [String: Any]) throws -> [UInt8] {
        try JSONPages.encode(fields.merging(["reports": [Any](), "openReportCount": 0, "firstReportedAt": NSNull()]) { $1 })
    }
}
