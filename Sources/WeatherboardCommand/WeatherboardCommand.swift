import ArgumentParser

/// `weatherboard`: the server and the operator's tasks. It talks to PostgreSQL directly.
@main
struct WeatherboardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "weatherboard",
        abstract: "The weatherboard server and its operator tasks.",
        subcommands: [ServeCommand.self, MigrateCommand.self, PurgeCommand.self, RolesCommand.self, TermsCommand.self, PushCommand.self]
    )
}
