import FakeAPNs
import Foundation
import Hashing
import Push
import Testing

/// The APNs client against the fake APNs, over real HTTP/2 and TLS with the fake's own CA, through libcurl's multi
/// interface (CONTRACT §14's delivery): one connection per environment, one provider token, every answer classified.
@Suite("APNs client against the fake APNs")
struct APNsClientTests {
    @Test("200 pushes at once: all delivered on one connection per environment, one token, the §14 headers on each")
    func concurrentPushes() async throws {
        try await APNsHarness.with(environments: 2) { harness in
            let pushes = (0..<200).map { APNsHarness.push($0 % 2 == 0 ? .production : .sandbox, priority: $0 % 3 == 0 ? 5 : 10) }
            let answers = await withTaskGroup(of: APNsAnswer.self) { group in
                for push in pushes { group.addTask { await harness.client.send(push) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == 200)
            #expect(answers.allSatisfy { $0 == .delivered })
            let sandbox = try #require(harness.sandbox)
            let byID = Dictionary(uniqueKeysWithValues: pushes.map { ($0.apnsID.uuidString.lowercased(), $0) })
            for (fake, environment) in [(harness.production, APNsPush.Environment.production), (sandbox, .sandbox)] {
                let delivered = fake.delivered
                #expect(delivered.count == 100)
                #expect(fake.connectionsAccepted == 1)
                #expect(Set(delivered.map(\.connectionID)).count == 1)
                for request in delivered {
                    let push = try #require(byID[request.apnsID ?? ""])
                    #expect(push.environment == environment)
                    #expect(request.deviceToken == push.deviceToken)
                    #expect(request.topic == APNsHarness.topic)
                    #expect(request.pushType == "alert")
                    #expect(request.priority == String(push.priority))
                    #expect(request.expiration == String(push.expiration))
                    #expect(request.collapseID == push.collapseID)
                    #expect(request.header("content-type") == "application/json")
                    #expect(request.payload == push.payload)
                }
            }
            #expect(harness.production.distinctJWTs.union(sandbox.distinctJWTs).count == 1)
            #expect(harness.client.tokensMade == 1)
            #expect(harness.client.connectionsOpened == 2)
        }
    }

    /// What the fake answers → what the worker is told.
    static let table: [(FakeAPNs.Answer, APNsAnswer)] = [
        (.status(410, reason: "Unregistered", timestamp: 1_700_000_000_123), .unregistered(since: 1_700_000_000_123)),
        (.status(410, reason: "Unregistered"), .unregistered(since: nil)),
        (.status(410, reason: "ExpiredToken", timestamp: 1_700_000_000_000), .unregistered(since: 1_700_000_000_000)),
        (.status(400, reason: "BadDeviceToken"), .badDeviceToken(reason: "BadDeviceToken")),
        (.status(400, reason: "DeviceTokenNotForTopic"), .badDeviceToken(reason: "DeviceTokenNotForTopic")),
        (.status(429, reason: "TooManyRequests"), .retry(reason: "TooManyRequests")),
        (.status(500, reason: "InternalServerError"), .retry(reason: "InternalServerError")),
        (.status(503, reason: "ServiceUnavailable"), .retry(reason: "ServiceUnavailable")),
        (.status(403, reason: "InvalidProviderToken"), .environmentRefused(reason: "InvalidProviderToken")),
        (.status(403, reason: "MissingProviderToken"), .environmentRefused(reason: "MissingProviderToken")),
        (.status(400, reason: "BadTopic"), .environmentRefused(reason: "BadTopic")),
        (.status(400, reason: "TopicDisallowed"), .environmentRefused(reason: "TopicDisallowed")),
        (.status(413, reason: "PayloadTooLarge"), .rejected(status: 413, reason: "PayloadTooLarge")),
        (.status(400, reason: "BadExpirationDate"), .rejected(status: 400, reason: "BadExpirationDate")),
    ]

    @Test("every answer classified: 410 (with and without its timestamp), 400, 403, 413, 429, 5xx, a reset stream")
    func answersClassified() async throws {
        try await APNsHarness.with { harness in
            let pushes = Self.table.map { _ in APNsHarness.push() }
            let reset = APNsHarness.push()
            var script: [String: FakeAPNs.Answer] = [:]
            for (push, row) in zip(pushes, Self.table) { script[push.apnsID.uuidString.lowercased()] = row.0 }
            script[reset.apnsID.uuidString.lowercased()] = .resetStream
            let answers = script
            harness.production.script { request in answers[request.apnsID ?? ""] ?? .ok }
            async let resetAnswer = harness.client.send(reset)
            let results = await withTaskGroup(of: (Int, APNsAnswer).self) { group in
                for (index, push) in pushes.enumerated() { group.addTask { (index, await harness.client.send(push)) } }
                return await group.reduce(into: [Int: APNsAnswer]()) { $0[$1.0] = $1.1 }
            }
            for (index, row) in Self.table.enumerated() {
                #expect(results[index] == row.1, "\(row.0)")
            }
            guard case .retry(let reason) = await resetAnswer else {
                Issue.record("a reset stream: \(await resetAnswer)")
                return
            }
            #expect(reason.hasPrefix("curl error 92"))  // CURLE_HTTP2_STREAM
        }
    }

    @Test("a body bigger than 4096 bytes: the fake's own 413 PayloadTooLarge, rejected")
    func payloadTooLarge() async throws {
        try await APNsHarness.with { harness in
            let big = Array(#"{"aps":{"alert":""#.utf8) + Array(repeating: UInt8(ascii: "x"), count: 5000) + Array(#""}}"#.utf8)
            let answer = await harness.client.send(APNsHarness.push(payload: big))
            #expect(answer == .rejected(status: 413, reason: "PayloadTooLarge"))
        }
    }

    @Test("a closed connection: retry; the next push opens a new connection and is delivered")
    func closedConnection() async throws {
        try await APNsHarness.with { harness in
            let doomed = APNsHarness.push()
            harness.production.script { request in request.apnsID == doomed.apnsID.uuidString.lowercased() ? .closeConnection : .ok }
            #expect(await harness.client.send(APNsHarness.push()) == .delivered)
            let before = try #require(harness.production.delivered.first?.connectionID)
            let answer = await harness.client.send(doomed)
            guard case .retry = answer else {
                Issue.record("a closed connection: \(answer)")
                return
            }
            #expect(await harness.client.send(APNsHarness.push()) == .delivered)
            let after = try #require(harness.production.delivered.last?.connectionID)
            #expect(after != before)
            #expect(harness.production.connectionsAccepted >= 2)
        }
    }

    @Test("403 ExpiredProviderToken once: a new token, sent again at once, delivered")
    func expiredOnce() async throws {
        try await APNsHarness.with { harness in
            harness.expireFirstToken()
            #expect(await harness.client.send(APNsHarness.push()) == .delivered)
            #expect(harness.production.distinctJWTs.count == 2)
            #expect(harness.production.requests.count == 2)
            #expect(harness.client.tokensMade == 2)
        }
    }

    @Test("403 ExpiredProviderToken again right after a renewal: the environment is refused, after one retry only")
    func expiredAlways() async throws {
        try await APNsHarness.with { harness in
            harness.production.script { _ in .status(403, reason: "ExpiredProviderToken") }
            #expect(await harness.client.send(APNsHarness.push()) == .environmentRefused(reason: "ExpiredProviderToken"))
            #expect(harness.production.requests.count == 2)
        }
    }

    @Test("50 pushes at once all told ExpiredProviderToken: one new token, all delivered")
    func expiredBurst() async throws {
        try await APNsHarness.with { harness in
            harness.expireFirstToken()
            let answers = await withTaskGroup(of: APNsAnswer.self) { group in
                for _ in 0..<50 { group.addTask { await harness.client.send(APNsHarness.push()) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0 == .delivered })
            #expect(harness.client.tokensMade == 2)
            #expect(harness.production.distinctJWTs.count == 2)
            #expect(harness.production.delivered.count == 50)
        }
    }

    @Test("a slow answer past the request timeout: retry")
    func slowAnswer() async throws {
        try await APNsHarness.with(requestTimeout: .milliseconds(500)) { harness in
            harness.production.script { _ in .delayed(.seconds(5), .ok) }
            let answer = await harness.client.send(APNsHarness.push())
            guard case .retry = answer else {
                Issue.record("a slow answer: \(answer)")
                return
            }
        }
    }

    @Test("a cancelled send leaves libcurl; the client keeps working")
    func cancellation() async throws {
        try await APNsHarness.with { harness in
            let stuck = APNsHarness.push()
            harness.production.script { request in
                request.apnsID == stuck.apnsID.uuidString.lowercased() ? .delayed(.seconds(60), .ok) : .ok
            }
            let client = harness.client
            let task = Task { await client.send(stuck) }
            _ = try await harness.production.waitForRequests(count: 1)
            task.cancel()
            #expect(await task.value == .retry(reason: "cancelled"))
            #expect(client.requestsInFlight == 0)
            #expect(await client.send(APNsHarness.push()) == .delivered)
            #expect(harness.production.connectionsAccepted == 1)
        }
    }
}

extension APNsHarness {
    /// Scripts the production fake to answer 403 `ExpiredProviderToken` to every push that carries the first provider
    /// token it saw, and 200 to the rest.
    func expireFirstToken() {
        let first = Box<String?>(nil)
        production.script { request in
            first.update { first in
                if first == nil { first = request.jwt }
                return request.jwt == first ? .status(403, reason: "ExpiredProviderToken") : .ok
            }
        }
    }
}
