import ArgumentParser
import Foundation
import WeatherboardAPI

/// `login --server URL --username U [--password-stdin]`: opens a session and stores its token 0600.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in as a moderator and store the session token.",
        discussion: "The token is stored with mode 0600 in $XDG_CONFIG_HOME/weatherboard/credentials.json (default ~/.config)."
    )

    @OptionGroup var options: GlobalOptions

    @Option(name: .long, help: "Your moderator account's username.")
    var username: String

    @Flag(name: .long, help: "Read the password from the first line of standard input instead of prompting.")
    var passwordStdin = false

    mutating func run() async throws {
        let options = options
        let username = username.trimmingCharacters(in: .whitespaces)
        let passwordStdin = passwordStdin
        try await CommandRunner.run {
            let store = CredentialsStore()
            guard let server = try options.server ?? store.load()?.server else {
                throw AdminError(.usage, "missing --server URL: run weatherboard-admin login --server URL --username \(username)")
            }
            let anonymous = try AdminClient(server: server, token: nil, username: username)
            let password: String
            if passwordStdin {
                guard let line = Terminal.readLine(), !line.isEmpty else { throw AdminError(.usage, "no password on standard input") }
                password = line
            } else {
                password = try Terminal.readPassword(prompt: "Password for \(username): ")
            }

            let auth = try await anonymous.call(
                "POST", "/v1/sessions", body: CredentialsRequest(username: username, password: password), as: AuthResponse.self
            )
            let client = try AdminClient(server: server, token: auth.token, username: username)
            let account = try await client.me()
            guard account.role == "moderator" || account.role == "admin" else {
                try? await client.call("DELETE", "/v1/sessions/current")
                throw AdminError(
                    .forbidden,
                    "\(username) is a \(account.role), not a moderator: an operator can run `weatherboard roles grant \(username) moderator`"
                )
            }
            try store.save(StoredCredentials(server: client.server, token: auth.token, username: account.username ?? username))
            Console.out("logged in to \(client.server) as \(account.username ?? username) (\(account.role), account \(account.id))")
            if account.banned {
                Console.error("warning: this account is banned")
            }
        }
    }
}
