import Foundation
import Hashing

extension FakeAPNs.Core {
    /// Apple's checks, in Apple's order: the refusal (status and reason) for `request`, or nil when it passes.
    /// `bodyBytes` is the body's whole length (the request keeps at most `maxKeptBodyBytes` of it).
    func check(_ request: FakeAPNs.Request, bodyBytes: Int) -> (status: Int, reason: String)? {
        guard request.method == "POST" else { return (405, "MethodNotAllowed") }
        guard request.path.hasPrefix("/3/device/") else { return (404, "BadPath") }
        guard Self.isDeviceToken(request.deviceToken) else { return (400, "BadDeviceToken") }
        guard let jwt = request.jwt else { return (403, "MissingProviderToken") }
        if let refusal = checkToken(jwt) { return refusal }
        guard let topic = request.topic else { return (400, "MissingTopic") }
        guard topic == self.topic else { return (400, "BadTopic") }
        guard let pushType = request.pushType, ["alert", "background", "voip", "complication", "fileprovider", "mdm", "location", "liveactivity", "pushtotalk"].contains(pushType) else {
            return (400, "InvalidPushType")
        }
        if let id = request.apnsID, !Self.isUUID(id) { return (400, "BadMessageId") }
        if let priority = request.priority, !["1", "5", "10"].contains(priority) { return (400, "BadPriority") }
        if let expiration = request.expiration, Int(expiration) == nil { return (400, "BadExpirationDate") }
        if let collapseID = request.collapseID, collapseID.utf8.count > 64 { return (400, "BadCollapseId") }
        guard bodyBytes <= FakeAPNs.maxPayloadBytes else { return (413, "PayloadTooLarge") }
        guard bodyBytes > 0 else { return (400, "PayloadEmpty") }
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.payload)) as? [String: Any], object["aps"] is [String: Any] else {
            return (400, "BadPayload")
        }
        return nil
    }

    /// The provider token: `{"alg":"ES256","kid":…}.{"iss":…,"iat":…}`, signed with the team's key, issued at most an
    /// hour ago and not in the future.
    func checkToken(_ jwt: String) -> (status: Int, reason: String)? {
        let invalid = (403, "InvalidProviderToken")
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64.decode(String(parts[0])), let claimsBytes = Base64.decode(String(parts[1])),
            let signature = Base64.decode(String(parts[2])),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimsBytes)) as? [String: Any]
        else { return invalid }
        guard header["alg"] as? String == "ES256", header["kid"] as? String == keyID, claims["iss"] as? String == teamID,
            let issuedAt = (claims["iat"] as? NSNumber)?.intValue
        else { return invalid }
        guard publicKey.verify(signature, of: Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)) else { return invalid }
        let now = self.now()
        guard issuedAt <= now + 60 else { return invalid }  // a minute of clock skew
        guard now - issuedAt <= 3600 else { return (403, "ExpiredProviderToken") }
        return nil
    }

    static func isDeviceToken(_ token: String) -> Bool {
        (64...200).contains(token.utf8.count) && token.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || (0x41...0x46).contains($0) }
    }

    /// `8-4-4-4-12` hex digits.
    static func isUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}
