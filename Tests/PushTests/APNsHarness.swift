import FakeAPNs
import Foundation
import Hashing
import Push
import Synchronization

/// A fake APNs (or two, one per environment) and an `APNsClient` trusting its CA, over real HTTP/2, TLS and libcurl.
struct APNsHarness {
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    static let topic = "com.example.weatherboard"

    let key: ES256Key
    let production: FakeAPNs
    let sandbox: FakeAPNs?
    let client: APNsClient

    /// Runs `body` with a fresh fake and client, stopping both after (also when `body` throws).
    static func with(
        environments: Int = 1,
        clientKey: ES256Key? = nil,
        topic: String = topic,
        trustsFake: Bool = true,
        requestTimeout: Duration = .seconds(10),
        now: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) },
        _ body: (APNsHarness) async throws -> Void
    ) async throws {
        let key = ES256Key.generate()
        let publicKey = try ES256PublicKey(pem: key.publicKeyPEM)
        let production = try await FakeAPNs.start(teamID: teamID, keyID: keyID, publicKey: publicKey, topic: Self.topic)
        var sandbox: FakeAPNs?
        if environments == 2 {
            sandbox = try? await FakeAPNs.start(
                teamID: teamID, keyID: keyID, publicKey: publicKey, topic: Self.topic, sharingAuthorityOf: production)
        }
        let client: APNsClient
        do {
            client = try APNsClient(
                configuration: .init(
                    teamID: teamID, keyID: keyID, key: clientKey ?? key, topic: topic, productionURL: production.url,
                    sandboxURL: sandbox?.url ?? production.url, extraCAFile: trustsFake ? production.caFile : nil,
                    requestTimeout: requestTimeout, connectTimeout: .seconds(5), now: now))
        } catch {
            try? await sandbox?.stop()
            try? await production.stop()
            throw error
        }
        let harness = APNsHarness(key: key, production: production, sandbox: sandbox, client: client)
        var failure: (any Error)?
        do { try await body(harness) } catch { failure = error }
        await client.shutdown()
        try? await sandbox?.stop()
        try? await production.stop()
        if let failure { throw failure }
    }

    /// A push with a fresh `apns-id` and a random device token.
    static func push(
        _ environment: APNsPush.Environment = .production, id: UUID = UUID(), payload: [UInt8]? = nil, priority: Int = 10
    ) -> APNsPush {
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        return APNsPush(
            deviceToken: token, environment: environment, apnsID: id, collapseID: "post-\(id.uuidString.prefix(8))",
            priority: priority, expiration: Int(Date().timeIntervalSince1970) + 3600,
            payload: payload ?? Array(#"{"aps":{"alert":{"title":"Mina","body":"Bring an umbrella"}},"wb":{"kind":"reply","postId":1,"replyId":2}}"#.utf8))
    }
}

/// A value a script keeps between requests.
final class Box<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) { self.value = Mutex(value) }

    func update<Result: Sendable>(_ body: (inout Value) -> Result) -> Result { value.withLock { body(&$0) } }
}
