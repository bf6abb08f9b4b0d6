import ArgumentParser

/// `remove <postId> [--note TEXT]`.
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove the post and resolve its open reports.")

    @OptionGroup var options: GlobalOptions
    @OptionGroup var arguments: DecisionArguments

    mutating func run() async throws {
        try await Decision.run(action: "remove", postId: arguments.postId, note: arguments.note, options: options)
    }
}
