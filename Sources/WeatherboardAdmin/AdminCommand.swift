import ArgumentParser

/// `weatherboard-admin`: the moderators' CLI. It talks only to the server's HTTP API.
@main
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "weatherboard-admin",
        abstract: "Work the weatherboard moderation queue over the HTTP API.",
        discussion: """
            Log in once with `weatherboard-admin login --server URL --username NAME`; every other command uses the \
            stored token (--server overrides the stored server). Exit codes: 0 success, 1 error, 64 usage, \
            3 server unreachable, 4 not logged in or session expired, 5 forbidden, 6 not found.
            """,
        subcommands: [
            LoginCommand.self, LogoutCommand.self, QueueCommand.self, ShowCommand.self, ReviewCommand.self,
            DismissCommand.self, RemoveCommand.self, RestoreCommand.self, BanCommand.self, UnbanCommand.self, LogCommand.self, MediaCommand.self, SearchCommand.self,
            WatchCommand.self,
        ]
    )
}
