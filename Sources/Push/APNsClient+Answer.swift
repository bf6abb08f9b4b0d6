import Foundation

extension APNsClient {
    /// APNs's answer as the worker acts on it (CONTRACT §14). `body` is outside data: at most `maxAnswerBytes` of it,
    /// maybe empty, maybe not JSON.
    static func classify(status: Int, body: [UInt8]) -> Attempt {
        if status == 200 { return .answer(.delivered) }
        let (reason, timestamp) = parseError(body)
        let named = reason ?? "HTTP \(status)"
        switch (status, reason) {
        case (403, "ExpiredProviderToken"):
            return .expiredProviderToken
        case (410, _):
            return .answer(.unregistered(since: timestamp))
        case (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
            return .answer(.badDeviceToken(reason: named))
        case (403, "InvalidProviderToken"), (403, "MissingProviderToken"), (400, "BadTopic"), (400, "TopicDisallowed"),
            (400, "MissingTopic"), (403, "BadCertificate"), (403, "BadCertificateEnvironment"):
            return .answer(.environmentRefused(reason: named))
        case (429, _), (500...599, _):
            return .answer(.retry(reason: named))
        default:
            return .answer(.rejected(status: status, reason: named))
        }
    }

    /// `reason` (a string of at most 100 bytes) and `timestamp` (milliseconds since 1970: a positive integer) from an
    /// APNs error body; nil for each that is missing or not of that shape.
    static func parseError(_ body: [UInt8]) -> (reason: String?, timestamp: Int64?) {
        guard !body.isEmpty, body.count <= maxAnswerBytes, let parsed = try? JSONDecoder().decode(ErrorBody.self, from: Data(body)) else {
            return (nil, nil)
        }
        let reason = parsed.reason.flatMap { !$0.isEmpty && $0.utf8.count <= 100 ? $0 : nil }
        let timestamp = parsed.timestamp.flatMap { $0 > 0 ? $0 : nil }
        return (reason, timestamp)
    }

    /// APNs's error body; a field of another type counts as missing, not as a failure of the whole.
    struct ErrorBody: Decodable {
        var reason: String?
        var timestamp: Int64?

        enum CodingKeys: String, CodingKey { case reason, timestamp }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            reason = try? container.decodeIfPresent(String.self, forKey: .reason)
            timestamp = try? container.decodeIfPresent(Int64.self, forKey: .timestamp)
        }
    }
}
