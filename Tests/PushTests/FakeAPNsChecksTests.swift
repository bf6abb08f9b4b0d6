import FakeAPNs
import Foundation
import Hashing
import Push
import Testing

/// The fake refuses what Apple refuses (so the client's passing tests mean something), and the client trusts only the
/// certificate authorities it is given.
@Suite("The fake APNs checks like Apple; trust")
struct FakeAPNsChecksTests {
    @Test("a provider token older than an hour: the fake answers ExpiredProviderToken; the client gives up on the environment")
    func oldToken() async throws {
        // The client's clock two hours behind the fake's: every token it makes is already too old.
        try await APNsHarness.with(now: { Int(Date().timeIntervalSince1970) - 7200 }) { harness in
            #expect(await harness.client.send(APNsHarness.push()) == .environmentRefused(reason: "ExpiredProviderToken"))
            let requests = harness.production.requests
            #expect(requests.count == 2)
            #expect(requests.allSatisfy { $0.answeredStatus == 403 })
            #expect(harness.client.tokensMade == 2)
        }
    }

    @Test("a token signed with another key: 403 InvalidProviderToken")
    func otherKey() async throws {
        try await APNsHarness.with(clientKey: ES256Key.generate()) { harness in
            #expect(await harness.client.send(APNsHarness.push()) == .environmentRefused(reason: "InvalidProviderToken"))
            #expect(harness.production.requests.first?.answeredStatus == 403)
        }
    }

    @Test("another topic: 400 BadTopic")
    func wrongTopic() async throws {
        try await APNsHarness.with(topic: "com.example.other") { harness in
            #expect(await harness.client.send(APNsHarness.push()) == .environmentRefused(reason: "BadTopic"))
            #expect(harness.production.requests.first?.answeredStatus == 400)
        }
    }

    @Test("a payload without aps: 400 BadPayload, rejected")
    func noAPS() async throws {
        try await APNsHarness.with { harness in
            let answer = await harness.client.send(APNsHarness.push(payload: Array(#"{"wb":{}}"#.utf8)))
            #expect(answer == .rejected(status: 400, reason: "BadPayload"))
        }
    }

    @Test("without APNS_CA_FILE the fake's certificate is not trusted: retry, nothing reaches it")
    func untrustedWithoutCAFile() async throws {
        try await APNsHarness.with(trustsFake: false) { harness in
            let answer = await harness.client.send(APNsHarness.push())
            guard case .retry(let reason) = answer else {
                Issue.record("untrusted: \(answer)")
                return
            }
            #expect(reason.hasPrefix("TLS"))
            #expect(harness.production.requests.isEmpty)
        }
    }

    @Test("a server whose certificate another CA signed: retry, nothing reaches it")
    func untrustedOtherCA() async throws {
        try await APNsHarness.with { harness in
            let other = try await FakeAPNs.start(
                teamID: APNsHarness.teamID, keyID: APNsHarness.keyID, publicKey: try ES256PublicKey(pem: harness.key.publicKeyPEM),
                topic: APNsHarness.topic)
            let client = try APNsClient(
                configuration: .init(
                    teamID: APNsHarness.teamID, keyID: APNsHarness.keyID, key: harness.key, topic: APNsHarness.topic,
                    productionURL: other.url, sandboxURL: other.url, extraCAFile: harness.production.caFile))
            let answer = await client.send(APNsHarness.push())
            await client.shutdown()
            let seen = other.requests.count
            try await other.stop()
            guard case .retry(let reason) = answer else {
                Issue.record("untrusted: \(answer)")
                return
            }
            #expect(reason.hasPrefix("TLS"))
            #expect(seen == 0)
        }
    }

    @Test("an APNS_CA_FILE that cannot be read: the environment is refused, nothing is sent")
    func unreadableCAFile() async throws {
        let client = try APNsClient(
            configuration: .init(
                teamID: APNsHarness.teamID, keyID: APNsHarness.keyID, key: ES256Key.generate(), topic: APNsHarness.topic,
                productionURL: "https://127.0.0.1:9", extraCAFile: "/nonexistent/ca.pem"))
        let answer = await client.send(APNsHarness.push())
        await client.shutdown()
        guard case .environmentRefused(let reason) = answer else {
            Issue.record("unreadable CA file: \(answer)")
            return
        }
        #expect(reason.hasPrefix("APNS_CA_FILE"))
    }

    @Test("settings checked at start, named in the error")
    func configuration() throws {
        let key = ES256Key.generate()
        func make(topic: String = "com.example.app", production: String = APNsClient.Configuration.defaultProductionURL) -> APNsClient.Configuration {
            .init(teamID: APNsHarness.teamID, keyID: APNsHarness.keyID, key: key, topic: topic, productionURL: production)
        }
        #expect(throws: Never.self) { try make().validate() }
        #expect(throws: APNsClient.Failure.topic("")) { try make(topic: "").validate() }
        #expect(throws: APNsClient.Failure.topic("com.example app")) { try make(topic: "com.example app").validate() }
        #expect(throws: APNsClient.Failure.topic(String(repeating: "a", count: 256))) { try make(topic: String(repeating: "a", count: 256)).validate() }
        for url in ["http://api.push.apple.com", "https://api.push.apple.com/3/device", "https://user@host", "https://", "https://host:99999", "https://host?x"] {
            #expect(throws: APNsClient.Failure.url(setting: "APNS_PRODUCTION_URL", url)) { try make(production: url).validate() }
        }
        #expect(throws: Never.self) { try make(production: "https://127.0.0.1:8443/").validate() }
    }
}
