/// What became of one push (CONTRACT §14), as the queue's worker acts on it.
public enum APNsAnswer: Sendable, Equatable {
    /// 200: APNs took it.
    case delivered
    /// 410 `Unregistered` (or `ExpiredToken`): the app is gone from the phone since `since` (APNs's timestamp,
    /// milliseconds since 1970; nil when the answer carried none). The device is removed only when `since` is later
    /// than its registration.
    case unregistered(since: Int64?)
    /// 400 `BadDeviceToken` or `DeviceTokenNotForTopic`: the device is removed.
    case badDeviceToken(reason: String)
    /// 429, 5xx, a reset stream, a lost connection, a timeout: try again later with backoff, until it expires.
    case retry(reason: String)
    /// 403 `InvalidProviderToken`, 400 `BadTopic` (and 403 `ExpiredProviderToken` again right after a renewal): the
    /// environment's sending pauses; the device is kept.
    case environmentRefused(reason: String)
    /// Any other refusal of this one notification (`PayloadTooLarge`, `BadExpirationDate`, …): it is dropped and counted;
    /// the device is kept.
    case rejected(status: Int, reason: String)
}

/// Sends pushes to APNs. `APNsClient` over HTTP/2; the worker takes any.
public protocol APNsSending: Sendable {
    func send(_ push: APNsPush) async -> APNsAnswer
}
