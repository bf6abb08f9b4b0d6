import COpenSSL

/// Password hashing with OpenSSL's scrypt at OWASP's recommended parameters (N=2^17, r=8, p=1: 128 MiB and
/// roughly a third of a second per hash), stored self-describing so parameters can be raised later:
///
///     $scrypt$ln=17,r=8,p=1$<salt, base64>$<32-byte key, base64>
///
/// These calls are CPU- and memory-heavy and blocking: run them on a bounded thread pool, never on
/// Swift's cooperative pool (see `PasswordHasher` in Board).
///
/// A stored string is outside data (a restore, a bad migration or anyone with write access to the table
/// can put anything there), so parsing it is total: only the canonical form with parameters inside
/// `Parameters.Limits` parses, every cost is computed without overflow, and a failing derivation is
/// `false`, never a trap.
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

        /// What a stored hash may ask for. Generous enough to raise the parameters later (8× OWASP's memory,
        /// 32× its work), small enough that a tampered row cannot make one login take the machine.
        public enum Limits {
            public static let logN = 1...20
            public static let r = 1...32
            public static let p = 1...16
            /// Memory of one hash (see `memoryBytes`): 1 GiB for V (8× OWASP) plus B, at most 64 KiB here.
            public static let memoryBytes = (1 << 30) + (1 << 16)
            /// N·r·p, proportional to the time one hash takes: 32× OWASP's 2^20.
            public static let work = 1 << 25
            public static let saltBytes = 8...64
            public static let keyBytes = 16...64
        }

        /// Bytes of memory one hash needs, as OpenSSL counts it: 128·r·(N + p) (V is 128·r·N, B is 128·r·p).
        /// `Int.max` when that doesn't fit (only possible for parameters outside `Limits`).
        public var memoryBytes: Int {
            guard (0..<Int.bitWidth - 1).contains(logN), r >= 0, p >= 0 else { return Int.max }
            let (np, o1) = (1 << logN).addingReportingOverflow(p)
            let (rnp, o2) = r.multipliedReportingOverflow(by: np)
            let (bytes, o3) = rnp.multipliedReportingOverflow(by: 128)
            return o1 || o2 || o3 ? Int.max : bytes
        }

        /// N·r·p, or `Int.max` when that doesn't fit.
        var work: Int {
            guard (0..<Int.bitWidth - 1).contains(logN), r >= 0, p >= 0 else { return Int.max }
            let (nr, o1) = (1 << logN).multipliedReportingOverflow(by: r)
            let (nrp, o2) = nr.multipliedReportingOverflow(by: p)
            return o1 || o2 ? Int.max : nrp
        }

        /// Inside `Limits`: the only parameters this type hashes or verifies with.
        public var isSupported: Bool {
            Limits.logN.contains(logN) && Limits.r.contains(r) && Limits.p.contains(p)
                && memoryBytes <= Limits.memoryBytes && work <= Limits.work
        }
    }

    public enum Failure: Error, Sendable, Equatable {
        /// Parameters outside `Parameters.Limits`.
        case unsupportedParameters(Parameters)
        /// OpenSSL refused to derive the key (it should not, for supported parameters).
        case derivationFailed
    }

    public let parameters: Parameters
    let salt: [UInt8]
    let key: [UInt8]

    /// The encoded form stored in the database.
    public var encoded: String {
        "$scrypt$ln=\(parameters.logN),r=\(parameters.r),p=\(parameters.p)$\(Base64.encode(salt))$\(Base64.encode(key))"
    }

    /// Parses the canonical encoded form (exactly what `encoded` produces); nil for anything else,
    /// including parameters, salts or keys outside `Parameters.Limits`.
    public init?(encoded: String) {
        // Far longer than any valid form (~150 bytes); refuse before splitting a huge string.
        guard encoded.utf8.count <= 512 else { return nil }
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "scrypt" else { return nil }
        let fields = parts[2].split(separator: ",", omittingEmptySubsequences: false)
        guard fields.count == 3,
            let ln = Self.number(fields[0], named: "ln"),
            let r = Self.number(fields[1], named: "r"),
            let p = Self.number(fields[2], named: "p")
        else { return nil }
        let parameters = Parameters(logN: ln, r: r, p: p)
        guard parameters.isSupported,
            let salt = Base64.decode(String(parts[3])), Parameters.Limits.saltBytes.contains(salt.count),
            let key = Base64.decode(String(parts[4])), Parameters.Limits.keyBytes.contains(key.count)
        else { return nil }
        self.init(parameters: parameters, salt: salt, key: key)
        // Canonical only (no padding, the standard alphabet): what is stored is what `encoded` writes.
        guard self.encoded == encoded else { return nil }
    }

    /// `name=digits`: 1–6 decimal digits without sign or leading zero (no parsed value can overflow).
    private static func number(_ field: Substring, named name: String) -> Int? {
        guard field.hasPrefix(name + "=") else { return nil }
        let digits = field.utf8.dropFirst(name.utf8.count + 1)
        guard (1...6).contains(digits.count), digits.first != UInt8(ascii: "0"),
            digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        var value = 0
        for d in digits { value = value * 10 + Int(d - UInt8(ascii: "0")) }
        return value
    }

    /// Hashes a password with a fresh 16-byte salt. Blocking.
    public static func create(password: String, parameters: Parameters = .owasp) throws(Failure) -> PasswordHash {
        guard parameters.isSupported else { throw .unsupportedParameters(parameters) }
        let salt = SecureRandom.bytes(16)
        guard let key = derive(password: password, salt: salt, parameters: parameters, length: 32) else {
            throw .derivationFailed
        }
        return PasswordHash(parameters: parameters, salt: salt, key: key)
    }

    private init(parameters: Parameters, salt: [UInt8], key: [UInt8]) {
        self.parameters = parameters
        self.salt = salt
        self.key = key
    }

    /// Checks a password in constant time with respect to the stored key. Blocking. False if the key
    /// cannot be derived.
    public func verify(_ password: String) -> Bool {
        guard let candidate = Self.derive(password: password, salt: salt, parameters: parameters, length: key.count) else {
            return false
        }
        return Digest.constantTimeEqual(candidate, key)
    }

    /// True when the stored parameters are weaker than `current`: re-hash at the next successful login.
    public func needsRehash(current: Parameters = .owasp) -> Bool {
        parameters.logN < current.logN || parameters.r < current.r || parameters.p < current.p
    }

    /// scrypt through OpenSSL; nil for unsupported parameters or if OpenSSL fails.
    static func derive(password: String, salt: [UInt8], parameters: Parameters, length: Int) -> [UInt8]? {
        guard parameters.isSupported, Parameters.Limits.keyBytes.contains(length) else { return nil }
        var out = [UInt8](repeating: 0, count: length)
        let passwordBytes = Array(password.utf8)
        // isSupported bounds memoryBytes by 1 GiB, so this neither overflows nor goes negative.
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
        return ok == 1 ? out : nil
    }
}
