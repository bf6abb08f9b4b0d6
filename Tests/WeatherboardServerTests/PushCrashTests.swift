import FakeAPNs
import Foundation
import Subprocess
import SystemPackage
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `weatherboard serve` with `PUSH=apns`, as a process of its own, killed with SIGKILL while its pushes are in flight
/// (CONTRACT §14: none lost, none twice on the phone), and `weatherboard push test`.
@Suite("Notifications: a server killed mid-send, and the operator's test")
struct PushCrashTests {
    /// The `weatherboard` binary next to the test bundle, or under the package's `.build/debug/`.
    static func binary() throws -> String {
        var candidates: [URL] = []
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            candidates.append(directory.appendingPathComponent("weatherboard"))
            directory = directory.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/weatherboard"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) && !$0.hasDirectoryPath }) else {
            throw TestFailure("weatherboard is not built: run `swift build --build-tests`")
        }
        return found.path
    }

    /// An APNs `.p8`-shaped key (PKCS#8 PEM, P-256) made by the openssl CLI, in a file of its own.
    static func keyFile() async throws -> String {
        let path = NSTemporaryDirectory() + "wb-apns-\(UUID().uuidString).p8"
        let outcome = try await Subprocess.run(
            .name("openssl"), arguments: ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path],
            output: .discarded, error: .string(limit: 1 << 16)
        )
        guard outcome.terminationStatus.isSuccess else { throw TestFailure("openssl genpkey: \(outcome.standardError)") }
        return path
    }

    /// The server's environment: `PUSH=apns` against `harness`'s fake and database, leases of `lease` seconds.
    static func environment(_ harness: PushHarness, keyFile: String, lease: Int = 5) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DATABASE_URL"] = harness.server.configuration.databaseURL
        environment["HOST"] = "127.0.0.1"
        environment["PORT"] = "0"
        environment["WEATHER_PROVIDER"] = "none"
        environment["LOG_LEVEL"] = "warning"
        environment["PUSH"] = "apns"
        environment["APNS_TEAM_ID"] = PushHarness.teamID
        environment["APNS_KEY_ID"] = PushHarness.keyID
        environment["APNS_PRIVATE_KEY_FILE"] = keyFile
        environment["APNS_TOPIC"] = PushHarness.topic
        environment["APNS_PRODUCTION_URL"] = harness.fake.url
        environment["APNS_SANDBOX_URL"] = harness.fake.url
        environment["APNS_CA_FILE"] = harness.fake.caFile
        environment["PUSH_LEASE_SECONDS"] = String(lease)
        environment["PURGE_INTERVAL_SECONDS"] = "86400"
        return environment
    }

    /// Starts `weatherboard serve`; the caller kills it.
    static func serve(_ environment: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try binary())
        process.arguments = ["serve"]
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test("SIGKILL with pushes in flight: after a restart every notification arrives, and no apns-id is answered 200 twice")
    func killedMidSend() async throws {
        try await withPushServer { harness in
            let server = harness.server
            let keyFile = try await Self.keyFile()
            defer { try? FileManager.default.removeItem(atPath: keyFile) }
            // The harness's fake checks tokens signed with its own key: this server signs with the file's.
            let key = try String(contentsOfFile: keyFile, encoding: .utf8)
            let fake = try await harness.fake(verifying: key)
            defer { Task { try? await fake.stop() } }
            let environment = Self.environment(harness, keyFile: keyFile).merging(
                ["APNS_PRODUCTION_URL": fake.url, "APNS_SANDBOX_URL": fake.url, "APNS_CA_FILE": fake.caFile], uniquingKeysWith: { $1 }
            )
            let author = try await server.anonymousAccount()
            for _ in 0..<4 { try await harness.device(author) }
            let post = try #require(try await server.createPost(author)["id"] as? String)
            func replies(_ n: Int) async throws {
                for _ in 0..<n {
                    let replier = try await server.anonymousAccount()
                    #expect(try await server.json("POST", "/v1/posts/\(post)/replies", token: replier.token, ["body": "hi"]).status == 201)
                }
            }
            // First, 20 notifications delivered and recorded by the first process.
            try await replies(5)
            let first = try Self.serve(environment)
            _ = try await fake.waitForDelivered(count: 20, timeout: .seconds(60))
            try await Self.waitUntil(timeout: 60) {
                try await harness.database.query("SELECT count(*) AS n FROM push_queue WHERE result = 'delivered'")[0].decode(Int.self, "n") == 20
            }
            // Then 20 more that APNs holds unanswered until the process dies.
            fake.script { _ in .delayed(.seconds(600), .ok) }
            try await replies(5)
            _ = try await fake.waitForRequests(count: 40, timeout: .seconds(60))
            kill(first.processIdentifier, SIGKILL)
            first.waitUntilExit()
            #expect(first.terminationReason == .uncaughtSignal)
            let hung = fake.requests.suffix(20)
            #expect(hung.allSatisfy { $0.answeredStatus == nil }, "in flight when killed")

            fake.script { _ in .ok }
            let second = try Self.serve(environment)
            defer {
                kill(second.processIdentifier, SIGKILL)
                second.waitUntilExit()
            }
            let delivered = try await fake.waitForDelivered(count: 40, timeout: .seconds(90))
            let ids = delivered.compactMap(\.apnsID)
            #expect(ids.count == 40)
            #expect(Set(ids).count == 40, "no apns-id answered 200 twice")
            #expect(Set(hung.compactMap(\.apnsID)).isSubset(of: Set(ids)), "each resend carries the apns-id of its first try")
            try await Self.waitUntil(timeout: 60) {
                try await harness.database.query("SELECT count(*) AS n FROM push_queue WHERE result = 'delivered'")[0].decode(Int.self, "n") == 40
            }
        }
    }

    @Test("`weatherboard push test <username>` sends to each device of the account and prints APNs's answer for each")
    func pushTestCommand() async throws {
        try await withPushServer { harness in
            let keyFile = try await Self.keyFile()
            defer { try? FileManager.default.removeItem(atPath: keyFile) }
            let fake = try await harness.fake(verifying: try String(contentsOfFile: keyFile, encoding: .utf8))
            defer { Task { try? await fake.stop() } }
            let (account, username, _) = try await harness.server.registeredAccount(prefix: "pushtest")
            let good = try await harness.device(account)
            let gone = try await harness.device(account)
            fake.script { $0.deviceToken == gone ? .status(410, reason: "Unregistered", timestamp: 1) : .ok }
            var environment = Self.environment(harness, keyFile: keyFile)
            environment["APNS_PRODUCTION_URL"] = fake.url
            environment["APNS_SANDBOX_URL"] = fake.url
            environment["APNS_CA_FILE"] = fake.caFile
            let outcome = try await Subprocess.run(
                .path(FilePath(try Self.binary())), arguments: ["push", "test", username], environment: .custom(Self.keyed(environment)),
                output: .string(limit: 1 << 20), error: .string(limit: 1 << 20)
            )
            #expect(outcome.terminationStatus.isSuccess, "\(outcome.standardError)")
            let lines = (outcome.standardOutput).split(separator: "\n").map(String.init)
            #expect(lines.count == 2, "\(lines)")
            #expect(lines.contains { $0.hasPrefix(String(good.prefix(8))) && $0.contains("200 delivered") }, "\(lines)")
            #expect(lines.contains { $0.hasPrefix(String(gone.prefix(8))) && $0.contains("410 Unregistered") }, "\(lines)")
            let payload = try #require(fake.delivered.first?.payload)
            #expect(String(decoding: payload, as: UTF8.self).contains(#""kind":"test""#))
            let missing = try await Subprocess.run(
                .path(FilePath(try Self.binary())), arguments: ["push", "test", "nobody_\(UInt32.random(in: 0...UInt32.max))"],
                environment: .custom(Self.keyed(environment)), output: .string(limit: 1 << 20), error: .string(limit: 1 << 20)
            )
            #expect(!missing.terminationStatus.isSuccess)
            #expect((missing.standardError).contains("not found"))
        }
    }

    /// `environment` as swift-subprocess names its variables.
    static func keyed(_ environment: [String: String]) -> [Environment.Key: String] {
        Dictionary(environment.map { (Environment.Key(stringLiteral: $0.key), $0.value) }, uniquingKeysWith: { $1 })
    }

    /// Waits for `condition` by asking it again after each short pause, failing after `timeout` seconds: a state of
    /// another process's making, which no event of this one's tells.
    static func waitUntil(timeout: Double, _ condition: () async throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try await !condition() {
            guard Date() < deadline else { throw TestFailure("condition not met within \(timeout) s") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
