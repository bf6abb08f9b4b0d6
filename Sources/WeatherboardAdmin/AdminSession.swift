import Foundation
import WeatherboardAPI

/// A logged-in moderator's client: the stored token, aimed at the stored server or at `--server`.
enum AdminSession {
    static func client(_ options: GlobalOptions, store: CredentialsStore = CredentialsStore()) throws -> AdminClient {
        guard let credentials = try store.load() else { throw AdminError.notLoggedIn() }
        return try AdminClient(server: options.server ?? credentials.server, token: credentials.token, username: credentials.username)
    }
}
