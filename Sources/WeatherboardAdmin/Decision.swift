import ArgumentParser
import WeatherboardAPI

/// What `dismiss`, `remove` and `restore` share: one decision on a post, resolving its open reports.
enum Decision {
    static func run(action: String, postId: String, note: String?, options: GlobalOptions) async throws {
        try await CommandRunner.run {
            let client = try AdminSession.client(options)
            let result = try await client.decide(postID: postId, action: action, note: note)
            Console.out(summary(action: action, result))
        }
    }

    /// `removed post 123; resolved 3 reports`; dismiss and restore also say the post's status.
    static func summary(action: String, _ result: DecisionResponse) -> String {
        let verb = ["dismiss": "dismissed", "remove": "removed", "restore": "restored"][action] ?? action
        var line = "\(verb) post \(result.post.id); resolved \(TextLayout.count(result.resolvedReports, "report"))"
        if action != "remove", let status = result.post.status { line += "; post is \(status)" }
        return line
    }
}

/// Options of the three decision commands.
struct DecisionArguments: ParsableArguments {
    @Argument(help: "The post's id.")
    var postId: String

    @Option(name: .long, help: "A note for the moderation log.")
    var note: String?
}
