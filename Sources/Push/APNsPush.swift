import Foundation

/// One notification as APNs's provider API takes it (CONTRACT §14): the device, the environment whose server takes it,
/// the headers Apple reads, and the JSON body. `apnsID` and `collapseID` are kept with the queued notification, so a
/// resend after a crash carries the same ones and the phone shows it once.
public struct APNsPush: Sendable, Equatable {
    public enum Environment: String, Sendable, CaseIterable {
        case production, sandbox
    }

    /// Lower-case hex, 64–200 characters (checked when the device was registered).
    public let deviceToken: String
    public let environment: Environment
    /// `apns-id`: a UUID, sent in its canonical lower-case form.
    public let apnsID: UUID
    /// `apns-collapse-id`: at most 64 bytes.
    public let collapseID: String
    /// `apns-priority`: 10 (send now), or 5 (the briefing: mind the battery).
    public let priority: Int
    /// `apns-expiration`: seconds since 1970 after which APNs stops trying.
    public let expiration: Int
    /// The JSON payload (`aps` and `wb`), at most 4096 bytes.
    public let payload: [UInt8]

    public init(
        deviceToken: String, environment: Environment, apnsID: UUID, collapseID: String, priority: Int, expiration: Int,
        payload: [UInt8]
    ) {
        self.deviceToken = deviceToken
        self.environment = environment
        self.apnsID = apnsID
        self.collapseID = collapseID
        self.priority = priority
        self.expiration = expiration
        self.payload = payload
    }
}
