/// `PUSH=apns` (CONTRACT §14): who the server is to APNs and where APNs is. The key file is read, and every value
/// checked, when the application is built (`Application+build`): a bad one stops the start with its name.
public struct PushConfiguration: Sendable, Equatable {
    /// `APNS_TEAM_ID`, `APNS_KEY_ID`: Apple's ten-character ids of the team and of the key.
    public var teamID: String
    public var keyID: String
    /// `APNS_PRIVATE_KEY_FILE`: the `.p8` (PEM, P-256) key the provider token is signed with.
    public var privateKeyFile: String
    /// `APNS_TOPIC`: the app's bundle id.
    public var topic: String
    /// `APNS_PRODUCTION_URL`, `APNS_SANDBOX_URL`: the two APNs servers (a test server in the tests and the bench).
    public var productionURL = "https://api.push.apple.com"
    public var sandboxURL = "https://api.sandbox.push.apple.com"
    /// `APNS_CA_FILE`: certificates trusted besides the system's (a test server's own authority).
    public var caFile: String?
    /// `PUSH_LEASE_SECONDS`: how long a claimed notification is one instance's; after a crash another (or the
    /// restarted one) sends it when the lease ends.
    public var leaseSeconds = 60

    public init(teamID: String, keyID: String, privateKeyFile: String, topic: String) {
        self.teamID = teamID
        self.keyID = keyID
        self.privateKeyFile = privateKeyFile
        self.topic = topic
    }
}
