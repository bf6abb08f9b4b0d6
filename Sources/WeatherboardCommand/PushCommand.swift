import ArgumentParser
import Board
import Database
import Foundation
import Logging
import Push
import WeatherboardServer

/// `weatherboard push test <username>` (CONTRACT §14): sends a test notification to each of the account's devices
/// straight through APNs (not the queue) and prints APNs's answer for each, so an operator can check `PUSH=apns` and
/// the `APNS_*` settings end to end.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Check push delivery through APNs (needs PUSH=apns and the APNS_* settings).",
        subcommands: [Test.self]
    )

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a test notification to an account's devices and print APNs's answer for each.")
        @Argument(help: "The account's username.") var username: String
        @Option(name: .customLong("database-url"), help: "libpq URI or conninfo (DATABASE_URL).") var databaseURL: String?

        func run() async throws {
            let configuration = try OperatorContext.configuration(databaseURL: databaseURL)
            guard let push = configuration.push else { throw OperatorFailure("PUSH is off: set PUSH=apns and the APNS_* settings") }
            let client: APNsClient
            do { client = try push.makeClient() } catch let error as ConfigurationError { throw OperatorFailure(error.description) }
            var logger = Logger(label: "weatherboard.operator")
            logger.logLevel = .error
            let pool = OperatorContext.pool(configuration, logger: logger)
            defer { pool.shutdown() }
            let devices = try await PushQueue.devices(ofUsername: username, on: pool)
            guard let devices else { throw OperatorFailure("account \(username) not found") }
            if devices.isEmpty { print("\(username) has no registered devices") }
            for device in devices {
                let payload = PushPayload(.test, language: device.language)
                let answer = await client.send(
                    APNsPush(
                        deviceToken: device.token, environment: device.environment, apnsID: UUID(), collapseID: "test",
                        priority: 10, expiration: Int(Date().timeIntervalSince1970) + 3600, payload: payload.json()
                    )
                )
                print("\(device.token.prefix(8))… \(device.environment.rawValue): \(Self.describe(answer))")
            }
            await client.shutdown()
        }

        static func describe(_ answer: APNsAnswer) -> String {
            switch answer {
            case .delivered: "200 delivered"
            case .unregistered(let since): "410 Unregistered" + (since.map { " (since \($0) ms)" } ?? "")
            case .badDeviceToken(let reason): "400 \(reason)"
            case .retry(let reason): "not delivered, would retry: \(reason)"
            case .environmentRefused(let reason): "refused for the whole environment: \(reason)"
            case .rejected(let status, let reason): "\(status) \(reason)"
            }
        }
    }
}
