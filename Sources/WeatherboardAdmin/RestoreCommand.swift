import ArgumentParser

/// `restore <postId | post:<id> | reply:<id>> [--note TEXT]`.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "restore", abstract: "Undo the removal of a post (or reply:<id>) and resolve its open reports.")

    @OptionGroup var options: GlobalOptions
    @OptionGroup var arguments: DecisionArguments

    mutating func run() async throws {
        try await Decision.run(action: "restore", target: arguments.target, note: arguments.note, options: options)
    }
}
