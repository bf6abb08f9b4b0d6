import ArgumentParser
import WeatherboardAPI

/// What `dismiss`, `remove` and `restore` share: one decision on a post or a reply, resolving its open reports.
enum Decision {
    static func run(action: String, target: String, note: String?, options: GlobalOptions) async throws {
        try await CommandRunner.run {
            let target = try ModerationTarget(target)
            let client = try AdminSession.client(options)
            Console.out(try await decide(client: client, target: target, action: action, note: note))
        }
    }

    /// Sends the decision to the target's endpoint; returns its one-line outcome.
    static func decide(client: AdminClient, target: ModerationTarget, action: String, note: String?) async throws -> String {
        switch target {
        case .post(let id): summary(action: action, try await client.decide(postID: id, action: action, note: note))
        case .reply(let id): summary(action: action, try await client.decide(replyID: id, action: action, note: note))
        }
    }

    /// `removed post 123; resolved 3 reports`; dismiss and restore also say the post's status.
    static func summary(action: String, _ result: DecisionResponse) -> String {
        line(action: action, what: ModerationTarget.post(result.post.id).spoken, resolved: result.resolvedReports, status: result.post.status, noun: "post")
    }

    /// `removed reply 45 on post 123; resolved 1 report`; dismiss and restore also say the reply's status.
    static func summary(action: String, _ result: ReplyDecisionResponse) -> String {
        let what = "\(ModerationTarget.reply(result.reply.id).spoken) on post \(result.reply.postId)"
        return line(action: action, what: what, resolved: result.resolvedReports, status: result.reply.status, noun: "reply")
    }

    private static func line(action: String, what: String, resolved: Int, status: String?, noun: String) -> String {
        let verb = ["dismiss": "dismissed", "remove": "removed", "restore": "restored"][action] ?? action
        var line = "\(verb) \(what); resolved \(TextLayout.count(resolved, "report"))"
        if action != "remove", let status { line += "; \(noun) is \(status)" }
        return line
    }
}

/// Options of the three decision commands.
struct DecisionArguments: ParsableArguments {
    @Argument(help: ModerationTarget.help)
    var target: String

    @Option(name: .long, help: "A note for the moderation log.")
    var note: String?

    func validate() throws {
        try ModerationTarget.validate(target)
    }
}
