import Foundation
import Hashing

extension APNsClient {
    /// What the client needs (CONTRACT §14's `APNS_*` settings), checked by `validate()` before anything is sent, with
    /// errors a server can print at start.
    public struct Configuration: Sendable {
        /// `APNS_TEAM_ID`: Apple's ten-character team id.
        public var teamID: String
        /// `APNS_KEY_ID`: the `.p8` key's ten-character id.
        public var keyID: String
        /// `APNS_PRIVATE_KEY_FILE`, read.
        public var key: ES256Key
        /// `APNS_TOPIC`: the app's bundle id.
        public var topic: String
        /// `APNS_PRODUCTION_URL`: `https://` and a host (and port), nothing after.
        public var productionURL: String
        /// `APNS_SANDBOX_URL`.
        public var sandboxURL: String
        /// `APNS_CA_FILE`: a PEM CA trusted in addition to the system's (a test server's); nil: the system's only.
        public var extraCAFile: String?
        /// The most one request may take, from entering libcurl to its answer's end.
        public var requestTimeout: Duration
        /// The most a new connection (TCP and TLS) may take.
        public var connectTimeout: Duration
        /// The most requests in libcurl at once (streams over the environments' connections); more wait in order.
        public var maxConcurrentRequests: Int
        /// The clock the provider token is made and aged by: seconds since 1970 (tests drive it).
        public var now: @Sendable () -> Int

        public static let defaultProductionURL = "https://api.push.apple.com"
        public static let defaultSandboxURL = "https://api.sandbox.push.apple.com"

        public init(
            teamID: String,
            keyID: String,
            key: ES256Key,
            topic: String,
            productionURL: String = Configuration.defaultProductionURL,
            sandboxURL: String = Configuration.defaultSandboxURL,
            extraCAFile: String? = nil,
            requestTimeout: Duration = .seconds(10),
            connectTimeout: Duration = .seconds(5),
            maxConcurrentRequests: Int = 1000,
            now: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }
        ) {
            self.teamID = teamID
            self.keyID = keyID
            self.key = key
            self.topic = topic
            self.productionURL = productionURL
            self.sandboxURL = sandboxURL
            self.extraCAFile = extraCAFile
            self.requestTimeout = requestTimeout
            self.connectTimeout = connectTimeout
            self.maxConcurrentRequests = maxConcurrentRequests
            self.now = now
        }

        /// Throws the first thing wrong, named by its setting.
        public func validate() throws(Failure) {
            guard ProviderToken.isAppleID(teamID) else { throw .teamID }
            guard ProviderToken.isAppleID(keyID) else { throw .keyID }
            guard Self.isTopic(topic) else { throw .topic(topic) }
            guard Self.isBaseURL(productionURL) else { throw .url(setting: "APNS_PRODUCTION_URL", productionURL) }
            guard Self.isBaseURL(sandboxURL) else { throw .url(setting: "APNS_SANDBOX_URL", sandboxURL) }
            if let extraCAFile, extraCAFile.isEmpty { throw .caFile }
            guard requestTimeout > .zero, connectTimeout > .zero else { throw .timeout }
            guard maxConcurrentRequests > 0 else { throw .maxConcurrentRequests }
        }

        /// A bundle id: 1–255 bytes, no whitespace or control characters.
        static func isTopic(_ topic: String) -> Bool {
            let bytes = topic.utf8
            return !bytes.isEmpty && bytes.count <= 255 && bytes.allSatisfy { $0 > 0x20 && $0 != 0x7F }
                && !topic.unicodeScalars.contains { $0.properties.isWhitespace || $0.properties.generalCategory == .control }
        }

        /// `https://host` or `https://host:port` (host: letters, digits, `.`, `-`, or an IPv4 address), nothing after
        /// but an optional single `/`.
        static func isBaseURL(_ text: String) -> Bool {
            guard text.hasPrefix("https://") else { return false }
            var rest = Substring(text.dropFirst("https://".count))
            if rest.hasSuffix("/") { rest = rest.dropLast() }
            var host = rest
            if let colon = rest.lastIndex(of: ":") {
                let port = rest[rest.index(after: colon)...]
                guard let number = Int(port), (1...65535).contains(number), port.allSatisfy(\.isASCII) else { return false }
                host = rest[..<colon]
            }
            guard !host.isEmpty, host.utf8.count <= 253 else { return false }
            return host.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x2D
            }
        }

        /// The base URL without a trailing `/`.
        func base(_ environment: APNsPush.Environment) -> String {
            let url = environment == .production ? productionURL : sandboxURL
            return url.hasSuffix("/") ? String(url.dropLast()) : url
        }
    }

    /// A setting the client cannot work with.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case teamID, keyID
        case topic(String)
        case url(setting: String, String)
        case caFile
        case timeout
        case maxConcurrentRequests

        public var description: String {
            switch self {
            case .teamID: ProviderToken.Failure.teamID.description
            case .keyID: ProviderToken.Failure.keyID.description
            case .topic(let topic):
                "APNS_TOPIC must be the app's bundle id (1–255 bytes, no spaces or control characters), not \(String(reflecting: topic))"
            case .url(let setting, let url):
                "\(setting) must be https:// and a host (and port), with no path, query or credentials, not \(String(reflecting: url))"
            case .caFile: "APNS_CA_FILE, when set, must name a PEM file"
            case .timeout: "the APNs request and connect timeouts must be positive"
            case .maxConcurrentRequests: "the APNs client needs room for at least one request at once"
            }
        }
    }
}
