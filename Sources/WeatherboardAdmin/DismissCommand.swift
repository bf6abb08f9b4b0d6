import ArgumentParser

/// `dismiss <postId | post:<id> | reply:<id>> [--note TEXT]`.
struct DismissCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dismiss", abstract: "Resolve the open reports of a post (or reply:<id>) without action; an auto-hidden one becomes visible again."
    )

    @OptionGroup var options: GlobalOptions
    @OptionGroup var arguments: DecisionArguments

    mutating func run() async throws {
        try await Decision.run(action: "dismiss", target: arguments.target, note: arguments.note, options: options)
    }
}
