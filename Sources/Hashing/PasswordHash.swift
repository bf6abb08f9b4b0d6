import COpenSSL

/// Password hashing with OpenSSL's scrypt at OWASP's recommended parameters (N=2^17, r=8, p=1: 128 MiB and
/// roughly a third of a second per hash), stored self-describing so parameters can be raised later:
///
///     $scrypt$ln=17,r=8,p=1$<salt, base64>$<32-byte key, base64>
///
/// These calls are CPU- and memory-heavy and blocking: run them on a bounded thread pool, never on
/// Swift's cooperative pool (see `PasswordHasher` in Board).
public struct PasswordHash: Sendable, Equatable {
    public struct Parameters: Sendable, Equatable {
        public var logN: Int
        public var r: Int
        public var p: Int
        public init(logN: Int, r: Int, p: Int) {
            self.logN = logN
            self.r = r
            self.p = p
        }
        /// OWASP Password Storage Cheat Sheet: scrypt N=2^17 (128 MiB), r=8, p=1.
        public static let owasp = Parameters(logN: 17, r: 8, p: 1)
        /// Bytes of memory one hash needs: 128 · N · r.
        public var memoryBytes: Int { 128 * (1 << logN) * r * p }
    }

    public let parameters: Parameters
    let salt: [UInt8]
    let key: [UInt8]

    /// The encoded form stored in the database.
    public var encoded: String {
        "$scrypt$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)$\(Base64.encode(salt))$\(Base64.encode(key))"
    }

    public init?(encoded: String) {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "scrypt" else { return nil }
        var values: [String: Int] = [:]
        for item in parts[2].split(separator: ",") {
            let kv = item.split(separator: "=")
            guard kv.count == 2, let v = Int(kv[1]) else { return nil }
            values[String(kv[0])] = v
        }
        guard let ln = values["ln"], let r = values["r"], let p = values["p"], (1...24).contains(ln), r > 0, p > 0,
            let salt = Base64.decode(String(parts[3])), let key = Base64.decode(String(parts[4])), !key.isEmpty
        else { return nil }
        self.parameters = Parameters(logN: ln, r: r, p: p)
        self.salt = salt
        self.key = key
    }

    /// Hashes a password with a fresh 16-byte salt. Blocking.
    public static func create(password: String, parameters: Parameters = .owasp) -> PasswordHash {
        let salt = SecureRandom.bytes(16)
        return PasswordHash(parameters: parameters, salt: salt, key: derive(password: password, salt: salt, parameters: parameters, length: 32))
    }

    private init(parameters: Parameters, salt: [UInt8], key: [UInt8]) {
        self.parameters = parameters
        self.salt = salt
        self.key = key
    }

    /// Checks a password in constant time with respect to the stored key. Blocking.
    public func verify(_ password: String) -> Bool {
        let candidate = Self.derive(password: password, salt: salt, parameters: parameters, length: key.count)
        return Digest.constantTimeEqual(candidate, key)
    }

    /// True when the stored parameters are weaker than `current`: re-hash at the next successful login.
    public func needsRehash(current: Parameters = .owasp) -> Bool {
        parameters.logN < current.logN || parameters.r < current.r || parameters.p < current.p
    }

    static func derive(password: String, salt: [UInt8], parameters: Parameters, length: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        let passwordBytes = Array(password.utf8)
        let maxMemory = UInt64(parameters.memoryBytes) + 16 * 1024 * 1024
        let ok = passwordBytes.withUnsafeBufferPointer { pw in
            salt.withUnsafeBufferPointer { s in
                pw.withMemoryRebound(to: CChar.self) { pwChars in
                    EVP_PBE_scrypt(
                        pwChars.baseAddress, pwChars.count, s.baseAddress, s.count,
                        UInt64(1) << UInt64(parameters.logN), UInt64(parameters.r), UInt64(parameters.p), maxMemory,
                        &out, length
                    )
                }
            }
        }
        precondition(ok == 1, "EVP_PBE_scrypt failed (parameters \(parameters))")
        return out
    }
}
