import ArgumentParser
import Board
import Database
import Foundation
import Logging
import RateLimit
import Weather
import WeatherboardServer

/// `weatherboard roles grant|revoke <username> moderator|admin`: bootstrap moderators from the server host.
struct RolesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roles",
        abstract: "Grant or revoke the moderator and admin roles (talks to PostgreSQL directly).",
        subcommands: [Grant.self, Revoke.self]
    )

    enum GrantableRole: String, ExpressibleByArgument, CaseIterable {
        case moderator, admin
    }

    struct Grant: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Give a registered account a role.")
        @Argument(help: "The account's username.") var username: String
        @Argument(help: "moderator or admin.") var role: GrantableRole
        @Option(name: .customLong("database-url"), help: "libpq URI or conninfo (DATABASE_URL).") var databaseURL: String?

        func run() async throws {
            let account = try await OperatorContext.withModeration(databaseURL: databaseURL) { moderation in
                try await moderation.setRole(username: username, role: Role(rawValue: role.rawValue)!)
            }
            print("\(account.username ?? username) (id \(account.id)) is now \(account.role.rawValue)")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take a role away: the account becomes a member.")
        @Argument(help: "The account's username.") var username: String
        @Argument(help: "moderator or admin.") var role: GrantableRole
        @Option(name: .customLong("database-url"), help: "libpq URI or conninfo (DATABASE_URL).") var databaseURL: String?

        func run() async throws {
            let account = try await OperatorContext.withModeration(databaseURL: databaseURL) { moderation in
                try await moderation.setRole(username: username, role: .member)
            }
            print("\(account.username ?? username) (id \(account.id)) is now \(account.role.rawValue)")
        }
    }
}

/// `weatherboard terms add|remove|list`: the blocked-term filter.
struct TermsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "terms",
        abstract: "Manage blocked terms: posts containing one are held for review.",
        subcommands: [Add.self, Remove.self, List.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add blocked terms (matched case-insensitively, on NFC text).")
        @Argument(help: "One or more terms.") var terms: [String]
        @Option(name: .customLong("database-url"), help: "libpq URI or conninfo (DATABASE_URL).") var databaseURL: String?

        func run() async throws {
            let added = try await OperatorContext.withModeration(databaseURL: databaseURL) { moderation in
                var added: [String] = []
                for term in terms { added.append(try await moderation.addTerm(term)) }
                return added
            }
            for term in added { print("added \(term)") }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove blocked terms.")
        @Argument(help: "One or more terms.") var terms: [String]
        @Option(name: .customLong("database-url"), help: "libpq URI or conninfo (DATABASE_URL).") var databaseURL: String?

        func run() async throws {
            try await OperatorContext.withModeration(databaseURL: databaseURL) { moderation in
                for term in terms {
                    print(try await moderation.removeTerm(term) ? "removed \(term)" : "not found: \(term)")
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List blocked terms.")
        @Option(name: .customLong("database-url"), help: "libpq URI or conninfo (DATABASE_URL).") var databaseURL: String?

        func run() async throws {
            let terms = try await OperatorContext.withModeration(databaseURL: databaseURL) { try await $0.terms() }
            for term in terms { print(term) }
        }
    }
}

extension OperatorContext {
    /// Runs `body` with the moderation service over a one-connection pool; board errors become one line.
    static func withModeration<T: Sendable>(databaseURL: String?, _ body: @Sendable (ModerationService) async throws -> T) async throws -> T {
        let configuration = try Self.configuration(databaseURL: databaseURL)
        var logger = Logger(label: "weatherboard.operator")
        logger.logLevel = .error
        let pool = Self.pool(configuration, logger: logger)
        defer { pool.shutdown() }
        let rateLimiter = RateLimiter.unlimited
        let posts = PostService(store: PostgresPostStore(database: pool), regions: RegionStore(database: pool), rateLimiter: rateLimiter)
        let moderation = ModerationService(store: PostgresModerationStore(database: pool), posts: posts, rateLimiter: rateLimiter, policy: ReportPolicy())
        do {
            return try await body(moderation)
        } catch let error as BoardError {
            switch error {
            case .notFound(let what): throw OperatorFailure("\(what) not found")
            case .invalidField(let field, let message): throw OperatorFailure("\(field) \(message)")
            default: throw OperatorFailure("\(error)")
            }
        } catch let error as PostgresError {
            throw OperatorFailure("database error: \(error.message)")
        }
    }
}
