import FakeAPNs
import Foundation
import Hashing

/// `fake-apns`: the fake APNs for the push bench. Answers 200 to every push that passes Apple's checks, prints
/// `listening <url>`, then once a second `t=… accepted=… distinct_apns_ids=… duplicates=… connections=…`, and on
/// SIGTERM or SIGINT the same fields with `first=` and `last=` (milliseconds since 1970 of the first and last accepted
/// push), then exits.
///
/// Flags (or environment): `--port` (`FAKE_APNS_PORT`, 0: any free one), `--team-id` (`APNS_TEAM_ID`), `--key-id`
/// (`APNS_KEY_ID`), `--public-key <pem file>` (`FAKE_APNS_PUBLIC_KEY`: the `.p8` key's public half), `--topic`
/// (`APNS_TOPIC`), `--ca-out <path>` (`FAKE_APNS_CA_OUT`: where to copy the fake's CA, for `APNS_CA_FILE`).
@main
enum FakeAPNsCommand {
    struct Usage: Error, CustomStringConvertible {
        var description: String
    }

    static func main() async throws {
        // Runs on the main thread (the main actor), not Swift's cooperative pool: reading two small files here blocks
        // no pool thread.
        let options = try parse(Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        guard let pem = try? String(contentsOfFile: options.publicKeyFile, encoding: .utf8) else {
            throw Usage(description: "fake-apns: cannot read the public key \(options.publicKeyFile)")
        }
        let publicKey = try ES256PublicKey(pem: pem)
        let fake = try await FakeAPNs.start(
            teamID: options.teamID, keyID: options.keyID, publicKey: publicKey, topic: options.topic, port: options.port)
        if let caOut = options.caOut {
            try? FileManager.default.removeItem(atPath: caOut)
            try FileManager.default.copyItem(atPath: fake.caFile, toPath: caOut)
        }
        say("listening \(fake.url)")

        let (stop, signalled) = AsyncStream<Int32>.makeStream()
        let sources = [SIGTERM, SIGINT].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
            source.setEventHandler { signalled.yield(signalNumber) }
            source.resume()
            return source
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                if Task.isCancelled { break }
                say(summary(fake, final: false))
            }
        }
        for await _ in stop { break }
        ticker.cancel()
        await ticker.value
        for source in sources { source.cancel() }
        say(summary(fake, final: true))
        try? await fake.stop()
    }

    /// One line on standard output, unbuffered (the bench reads it while the fake runs).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func summary(_ fake: FakeAPNs, final: Bool) -> String {
        let delivered = fake.delivered
        let distinct = Set(delivered.compactMap(\.apnsID)).count
        var line = "t=\(Int(Date().timeIntervalSince1970)) accepted=\(delivered.count) distinct_apns_ids=\(distinct)"
        line += " duplicates=\(delivered.count - distinct) connections=\(fake.connectionsAccepted)"
        if final {
            let times = delivered.map(\.receivedAtMilliseconds)
            line += " first=\(times.min() ?? 0) last=\(times.max() ?? 0)"
        }
        return line
    }

    struct Options {
        var port = 0
        var teamID = ""
        var keyID = ""
        var publicKeyFile = ""
        var topic = ""
        var caOut: String?
    }

    static func parse(_ arguments: [String], environment: [String: String]) throws -> Options {
        var options = Options()
        options.port = environment["FAKE_APNS_PORT"].flatMap { Int($0) } ?? 0
        options.teamID = environment["APNS_TEAM_ID"] ?? ""
        options.keyID = environment["APNS_KEY_ID"] ?? ""
        options.publicKeyFile = environment["FAKE_APNS_PUBLIC_KEY"] ?? ""
        options.topic = environment["APNS_TOPIC"] ?? ""
        options.caOut = environment["FAKE_APNS_CA_OUT"]
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw Usage(description: "fake-apns: \(flag) needs a value") }
            switch flag {
            case "--port":
                guard let port = Int(value), (0...65535).contains(port) else { throw Usage(description: "fake-apns: --port \(value)") }
                options.port = port
            case "--team-id": options.teamID = value
            case "--key-id": options.keyID = value
            case "--public-key": options.publicKeyFile = value
            case "--topic": options.topic = value
            case "--ca-out": options.caOut = value
            default: throw Usage(description: "fake-apns: unknown flag \(flag)")
            }
        }
        for (name, value) in [("--team-id", options.teamID), ("--key-id", options.keyID), ("--public-key", options.publicKeyFile), ("--topic", options.topic)]
        where value.isEmpty {
            throw Usage(description: "fake-apns: \(name) is required")
        }
        return options
    }
}
