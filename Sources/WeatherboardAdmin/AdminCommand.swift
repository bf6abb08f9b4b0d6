import ArgumentParser

/// `weatherboard-admin`: the moderators' CLI. It talks only to the server's HTTP API.
@main
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "weatherboard-admin",
        abstract: "Work the weatherboard moderation queue over the HTTP API."
    )
}
