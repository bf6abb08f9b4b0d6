import Foundation
import Hashing
import Push

extension PushConfiguration {
    /// The APNs client this configuration describes, its key file read and every value checked; an error names its
    /// setting, so `weatherboard serve` stops at start instead of failing every push later.
    public func makeClient() throws -> APNsClient {
        let pem: String
        do {
            pem = try String(contentsOfFile: privateKeyFile, encoding: .utf8)
        } catch {
            throw ConfigurationError("APNS_PRIVATE_KEY_FILE: cannot read \(privateKeyFile)")
        }
        let key: ES256Key
        do { key = try ES256Key(pem: pem) } catch { throw ConfigurationError("APNS_PRIVATE_KEY_FILE: not an APNs .p8 key (PEM, P-256): \(error)") }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) { throw ConfigurationError("APNS_CA_FILE: cannot read \(caFile)") }
        let configuration = APNsClient.Configuration(
            teamID: teamID, keyID: keyID, key: key, topic: topic, productionURL: productionURL, sandboxURL: sandboxURL, extraCAFile: caFile
        )
        do {
            try configuration.validate()
            return try APNsClient(configuration: configuration)
        } catch {
            throw ConfigurationError("\(error)")
        }
    }
}
