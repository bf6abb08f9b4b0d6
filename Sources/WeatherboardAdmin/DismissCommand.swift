import ArgumentParser

/// `dismiss <postId> [--note TEXT]`.
struct DismissCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dismiss", abstract: "Resolve the post's open reports without action; an auto-hidden post becomes visible again.")

    @OptionGroup var options: GlobalOptions
    @OptionGroup var arguments: DecisionArguments

    mutating func run() async throws {
        try await Decision.run(action: "dismiss", postId: arguments.postId, note: arguments.note, options: options)
    }
}
