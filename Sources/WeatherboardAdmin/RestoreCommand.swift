import ArgumentParser

/// `restore <postId> [--note TEXT]`.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "restore", abstract: "Undo a removal and resolve the post's open reports.")

    @OptionGroup var options: GlobalOptions
    @OptionGroup var arguments: DecisionArguments

    mutating func run() async throws {
        try await Decision.run(action: "restore", postId: arguments.postId, note: arguments.note, options: options)
    }
}
