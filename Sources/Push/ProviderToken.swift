import Foundation
import Hashing
import Synchronization

/// The APNs provider token (CONTRACT §14): a JWT `{"alg":"ES256","kid":<key id>}.{"iss":<team id>,"iat":<seconds>}`
/// signed with the team's key. One serves every push of an instance: it is made once and reused, and made anew 40
/// minutes after it was made (Apple refuses one older than an hour, and one renewed more often than every 20 minutes)
/// or when APNs answers 403 `ExpiredProviderToken` for it. Every clock reading is passed in (`now`, seconds since
/// 1970), so tests drive it without waiting.
public final class ProviderToken: Sendable {
    /// Apple's ids are ten capital letters and digits.
    public static func isAppleID(_ text: String) -> Bool {
        text.utf8.count == 10 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
    }

    /// How long a token is reused: inside Apple's window of 20 to 50 minutes.
    public static let renewAfterSeconds = 40 * 60

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case teamID, keyID

        public var description: String {
            switch self {
            case .teamID: "APNS_TEAM_ID must be Apple's ten-character team id (capital letters and digits)"
            case .keyID: "APNS_KEY_ID must be Apple's ten-character key id (capital letters and digits)"
            }
        }
    }

    let key: ES256Key
    public let teamID: String
    public let keyID: String
    private let made = Mutex<(token: String, issuedAt: Int)?>(nil)
    private let renewals = Atomic<Int>(0)

    public init(key: ES256Key, teamID: String, keyID: String) throws {
        guard Self.isAppleID(teamID) else { throw Failure.teamID }
        guard Self.isAppleID(keyID) else { throw Failure.keyID }
        self.key = key
        self.teamID = teamID
        self.keyID = keyID
    }

    /// The token to send at `now`: the one made last, unless it is 40 minutes old (or none was made, or the clock went
    /// back past it).
    public func current(now: Int) throws -> String {
        try made.withLock { made in
            if let made, now >= made.issuedAt, now - made.issuedAt < Self.renewAfterSeconds { return made.token }
            let token = try make(issuedAt: now)
            made = (token, now)
            return token
        }
    }

    /// After APNs answered 403 `ExpiredProviderToken` for `rejected`: a new token, unless one replaced it already (a
    /// burst of such answers makes one new token, not one each).
    public func renew(after rejected: String, now: Int) throws -> String {
        try made.withLock { made in
            if let made, made.token != rejected { return made.token }
            let token = try make(issuedAt: now)
            made = (token, now)
            return token
        }
    }

    /// Tokens made so far (`/metrics`).
    public var tokensMade: Int { renewals.load(ordering: .relaxed) }

    private func make(issuedAt: Int) throws -> String {
        let header = Self.json(["alg": .string("ES256"), "kid": .string(keyID)])
        let claims = Self.json(["iss": .string(teamID), "iat": .number(issuedAt)])
        let signingInput = Base64.encode(header, urlSafe: true) + "." + Base64.encode(claims, urlSafe: true)
        let signature = try key.sign(Array(signingInput.utf8))
        renewals.add(1, ordering: .relaxed)
        return signingInput + "." + Base64.encode(signature, urlSafe: true)
    }

    enum Value {
        case string(String)
        case number(Int)
    }

    /// A flat JSON object, its keys sorted (the values are Apple ids and a number: nothing to escape but what
    /// JSONSerialization escapes).
    static func json(_ object: [String: Value]) -> [UInt8] {
        let dictionary: [String: Any] = object.mapValues { value -> Any in
            switch value {
            case .string(let text): text
            case .number(let number): number
            }
        }
        // Only strings and integers: serialization cannot fail.
        return Array((try? JSONSerialization.data(withJSONObject: dictionary, options: [.sortedKeys])) ?? Data())
    }
}
