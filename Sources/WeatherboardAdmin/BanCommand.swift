import ArgumentParser
import Foundation
import WeatherboardAPI

/// `ban <accountId> [--days N] --reason R`: without `--days` the ban is permanent.
struct BanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ban",
        abstract: "Ban an account: it can still read, but not post, edit or report."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The account's id.")
    var accountId: String

    @Option(name: .long, help: "Lift the ban after this many days (permanent without it).")
    var days: Int?

    @Option(name: .long, help: "Why (kept in the moderation log).")
    var reason: String

    func validate() throws {
        if let days, !(1...36_500).contains(days) { throw ValidationError("--days must be between 1 and 36500") }
        if reason.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { throw ValidationError("--reason must not be empty") }
    }

    mutating func run() async throws {
        let (options, accountId, days, reason) = (options, accountId, days, reason)
        try await CommandRunner.run {
            let client = try AdminSession.client(options)
            Console.out(try await Self.ban(client: client, accountId: accountId, days: days, reason: reason))
        }
    }

    /// Bans and describes the outcome: `banned account 42 until 2026-…` or `banned account 42 permanently`.
    static func ban(client: AdminClient, accountId: String, days: Int?, reason: String) async throws -> String {
        let until = days.map { Date().addingTimeInterval(TimeInterval($0) * 86_400) }
        let account = try await client.ban(accountID: accountId, until: until, reason: reason)
        if let end = account.bannedUntil {
            return "banned account \(account.id) until \(TextLayout.timestamp(end))"
        }
        return "banned account \(account.id) permanently"
    }
}
