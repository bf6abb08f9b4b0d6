import ArgumentParser
import Foundation

/// A failure the CLI reports as one line on standard error, with a non-zero exit code.
struct AdminError: Error, CustomStringConvertible, Sendable {
    enum Kind: Sendable {
        case usage, unreachable, notLoggedIn, sessionExpired, forbidden, notFound, server
    }

    var kind: Kind
    var message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    var description: String { message }

    /// Exit codes, documented in the README.
    var exitCode: Int32 {
        switch kind {
        case .server: return 1
        case .usage: return 64  // EX_USAGE, as swift-argument-parser uses for a malformed command line
        case .unreachable: return 3
        case .notLoggedIn, .sessionExpired: return 4
        case .forbidden: return 5
        case .notFound: return 6
        }
    }

    static func notLoggedIn() -> AdminError {
        AdminError(.notLoggedIn, "not logged in: run weatherboard-admin login --server URL --username NAME")
    }

    static func sessionExpired(server: String, username: String?) -> AdminError {
        AdminError(.sessionExpired, "session expired: run weatherboard-admin login --server \(server) --username \(username ?? "NAME")")
    }
}

/// Runs a command body; turns every failure into one line on standard error and a non-zero exit.
enum CommandRunner {
    static func run(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as AdminError {
            Console.error(error.message)
            throw ExitCode(error.exitCode)
        } catch let error as ExitCode {
            throw error
        } catch {
            Console.error("error: \(error)")
            throw ExitCode(1)
        }
    }
}
