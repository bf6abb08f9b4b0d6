import ArgumentParser

/// `remove <postId | post:<id> | reply:<id>> [--note TEXT]`.
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a post (or reply:<id>) and resolve its open reports.")

    @OptionGroup var options: GlobalOptions
    @OptionGroup var arguments: DecisionArguments

    mutating func run() async throws {
        try await Decision.run(action: "remove", target: arguments.target, note: arguments.note, options: options)
    }
}
