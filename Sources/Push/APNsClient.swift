import CurlClient
import Foundation
import Hashing

/// Sends pushes to APNs over HTTP/2 with token authentication (CONTRACT §14): an adapter, like `CurlClient`, that
/// decides nothing about what to send or to whom.
///
/// - One `CurlMultiplexer` carries both environments: libcurl keeps one connection per host, so one HTTP/2 connection
///   per environment, every push a stream on it.
/// - One provider token (`ProviderToken`) for every push, renewed 40 minutes after it was made; a 403
///   `ExpiredProviderToken` renews it (a burst of them renews it once) and the push is sent again at once, one time.
/// - Every answer becomes an `APNsAnswer` (`classify`); the body is read as JSON `{"reason", "timestamp"}` from at most
///   its first 4 KiB and anything else in it is ignored, so an answer never traps. A transport failure (a reset
///   stream, a lost connection, a timeout, a TLS failure, an untrusted certificate) is `.retry`: the worker backs off,
///   and a certificate problem shows in its counts and logs while the notification waits.
public final class APNsClient: APNsSending {
    public let configuration: Configuration
    let token: ProviderToken
    let multiplexer: CurlMultiplexer

    /// The most body bytes kept from an answer (Apple's are a few dozen).
    static let maxAnswerBytes = 4096

    public init(configuration: Configuration) throws {
        try configuration.validate()
        self.configuration = configuration
        self.token = try ProviderToken(key: configuration.key, teamID: configuration.teamID, keyID: configuration.keyID)
        self.multiplexer = CurlMultiplexer(
            maxConcurrentTransfers: configuration.maxConcurrentRequests, extraCAFile: configuration.extraCAFile)
    }

    public func send(_ push: APNsPush) async -> APNsAnswer {
        guard Self.isDeviceToken(push.deviceToken) else { return .badDeviceToken(reason: "BadDeviceToken") }
        let jwt: String
        do {
            jwt = try token.current(now: configuration.now())
        } catch {
            return .environmentRefused(reason: "the provider token could not be signed: \(error)")
        }
        let first = await attempt(push, jwt: jwt)
        guard case .expiredProviderToken = first else { return first.answer }
        let renewed: String
        do {
            renewed = try token.renew(after: jwt, now: configuration.now())
        } catch {
            return .environmentRefused(reason: "the provider token could not be signed: \(error)")
        }
        let second = await attempt(push, jwt: renewed)
        if case .expiredProviderToken = second { return .environmentRefused(reason: "ExpiredProviderToken") }
        return second.answer
    }

    /// Provider tokens made so far (`/metrics`).
    public var tokensMade: Int { token.tokensMade }
    /// Connections to APNs opened so far, both environments (`/metrics`).
    public var connectionsOpened: Int { multiplexer.connectionsOpened }
    /// Requests on their way now.
    public var requestsInFlight: Int { multiplexer.transfersInFlight + multiplexer.transfersQueued }

    /// Ends the connections; pushes still on their way answer `.retry`.
    public func shutdown() async { await multiplexer.shutdown() }

    enum Attempt {
        case answer(APNsAnswer)
        case expiredProviderToken

        var answer: APNsAnswer {
            switch self {
            case .answer(let answer): answer
            case .expiredProviderToken: .environmentRefused(reason: "ExpiredProviderToken")
            }
        }
    }

    private func attempt(_ push: APNsPush, jwt: String) async -> Attempt {
        let request = self.request(for: push, jwt: jwt)
        do {
            let response = try await multiplexer.send(request)
            return Self.classify(status: response.status, body: response.body)
        } catch let error as CurlError where error.code == 77 {
            // CURLE_SSL_CACERT_BADFILE: APNS_CA_FILE cannot be read; no push can go until the setting is mended.
            return .answer(.environmentRefused(reason: "APNS_CA_FILE: \(error)"))
        } catch let error as CurlError {
            return .answer(.retry(reason: error.isTLS ? "TLS: \(error)" : error.description))
        } catch is CancellationError {
            return .answer(.retry(reason: "cancelled"))
        } catch {
            return .answer(.retry(reason: "\(error)"))
        }
    }

    func request(for push: APNsPush, jwt: String) -> CurlRequest {
        var request = CurlRequest(
            method: "POST",
            url: configuration.base(push.environment) + "/3/device/" + push.deviceToken,
            headers: [
                ("authorization", "bearer " + jwt),
                ("apns-topic", configuration.topic),
                ("apns-push-type", "alert"),
                ("apns-priority", String(push.priority)),
                ("apns-expiration", String(push.expiration)),
                ("apns-collapse-id", push.collapseID),
                ("apns-id", push.apnsID.uuidString.lowercased()),
                ("content-type", "application/json"),
            ],
            body: push.payload,
            connectTimeoutMilliseconds: Self.milliseconds(configuration.connectTimeout),
            timeoutMilliseconds: Self.milliseconds(configuration.requestTimeout),
            maxResponseBytes: Self.maxAnswerBytes
        )
        request.truncatesResponseBody = true
        return request
    }

    /// 64–200 hex digits: anything else never reaches a URL.
    static func isDeviceToken(_ token: String) -> Bool {
        (64...200).contains(token.utf8.count) && token.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || (0x41...0x46).contains($0) }
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(clamping: seconds) &* 1000 &+ Int(attoseconds / 1_000_000_000_000_000))
    }
}
