/// Which APNs a device's token belongs to (CONTRACT §14): an App Store or TestFlight build's, or a development build's.
public enum PushEnvironment: String, Sendable, CaseIterable {
    case production, sandbox
}
