import ArgumentParser
import Foundation

/// `logout`: revokes the session on the server, then deletes the credentials file.
struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "logout", abstract: "Revoke the session and delete the stored token.")

    @OptionGroup var options: GlobalOptions

    mutating func run() async throws {
        let options = options
        try await CommandRunner.run {
            let store = CredentialsStore()
            guard try store.load() != nil else {
                Console.out("not logged in")
                return
            }
            let client = try AdminSession.client(options, store: store)
            do {
                try await client.call("DELETE", "/v1/sessions/current")
                try store.delete()
                Console.out("logged out of \(client.server)")
            } catch let error as AdminError where error.kind == .sessionExpired {
                try store.delete()
                Console.out("the session had already expired; removed \(store.path)")
            }
        }
    }
}
