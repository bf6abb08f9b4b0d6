import ArgumentParser

/// `unban <accountId>`.
struct UnbanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unban", abstract: "Lift an account's ban.")

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The account's id.")
    var accountId: String

    mutating func run() async throws {
        let (options, accountId) = (options, accountId)
        try await CommandRunner.run {
            let client = try AdminSession.client(options)
            try await client.unban(accountID: accountId)
            Console.out("unbanned account \(accountId)")
        }
    }
}
