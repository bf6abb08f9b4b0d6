import COpenSSL

/// An ES256 private key (ECDSA on P-256 with SHA-256), as Apple hands it out for APNs token authentication: a `.p8`
/// file holding a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`). Signatures come out the JOSE way (RFC 7518 §3.4): the
/// 32-byte `r` and `s`, concatenated, not DER.
///
/// The key is immutable once read; OpenSSL signs with it from any thread, each call with a context of its own.
public final class ES256Key: @unchecked Sendable {
    let key: OpaquePointer

    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// Not a PEM private key OpenSSL can read.
        case unreadable
        /// A key, but not an EC key on P-256 (an RSA key, P-384, …).
        case notP256
        case signing

        public var description: String {
            switch self {
            case .unreadable: "not a PEM private key (an APNs .p8 file holds one: -----BEGIN PRIVATE KEY-----)"
            case .notP256: "not an ES256 key: APNs wants an EC key on P-256"
            case .signing: "OpenSSL could not sign"
            }
        }
    }

    /// Reads a PEM private key; refuses anything but an EC key on P-256.
    public init(pem: String) throws {
        let bytes = Array(pem.utf8)
        guard !bytes.isEmpty, bytes.count <= 64 * 1024, let bio = bytes.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw Failure.unreadable
        }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
            ERR_clear_error()
            throw Failure.unreadable
        }
        guard Self.isP256(key) else {
            EVP_PKEY_free(key)
            throw Failure.notP256
        }
        self.key = key
    }

    private init(owning key: OpaquePointer) {
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// A new random P-256 key (the tests' stand-in for Apple's).
    public static func generate() -> ES256Key {
        let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil)
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else { preconditionFailure("OpenSSL could not make a P-256 key") }
        return ES256Key(owning: key)
    }

    static func isP256(_ key: OpaquePointer) -> Bool {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else { return false }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, &name, name.count, &length) == 1 else { return false }
        let group = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return group == "prime256v1" || group == "P-256"
    }

    /// The JOSE signature of `message`: SHA-256, ECDSA, then `r ‖ s`, 64 bytes.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw Failure.signing }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { throw Failure.signing }
        var length = 0
        let ok = message.withUnsafeBytes { raw in EVP_DigestSign(context, nil, &length, raw.baseAddress, raw.count) }
        guard ok == 1 else { throw Failure.signing }
        var der = [UInt8](repeating: 0, count: length)
        let signed = message.withUnsafeBytes { raw in EVP_DigestSign(context, &der, &length, raw.baseAddress, raw.count) }
        guard signed == 1 else { throw Failure.signing }
        return try Self.jose(fromDER: Array(der.prefix(length)))
    }

    /// The public half, as a PEM `PUBLIC KEY` (what a verifier holds).
    public var publicKeyPEM: String {
        guard let bio = BIO_new(BIO_s_mem()) else { preconditionFailure("OpenSSL could not make a memory BIO") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PUBKEY(bio, key) == 1 else { preconditionFailure("OpenSSL could not write a public key") }
        var out = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
        let read = out.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
        return String(decoding: out.prefix(Int(max(read, 0))), as: UTF8.self)
    }

    /// DER `ECDSA-Sig-Value` → 64 bytes of `r ‖ s`, each left-padded to 32.
    static func jose(fromDER der: [UInt8]) throws -> [UInt8] {
        var pointer: UnsafePointer<UInt8>? = nil
        let signature = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            pointer = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &pointer, buffer.count)
        }
        guard let signature else { throw Failure.signing }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        var out = [UInt8](repeating: 0, count: 64)
        let written = out.withUnsafeMutableBufferPointer { buffer in
            BN_bn2binpad(r, buffer.baseAddress, 32) == 32 && BN_bn2binpad(s, buffer.baseAddress! + 32, 32) == 32
        }
        guard written else { throw Failure.signing }
        return out
    }
}

/// An ES256 public key, for checking JOSE signatures (the tests' fake APNs does what Apple does).
public final class ES256PublicKey: @unchecked Sendable {
    let key: OpaquePointer

    public init(pem: String) throws {
        let bytes = Array(pem.utf8)
        guard !bytes.isEmpty, bytes.count <= 64 * 1024, let bio = bytes.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else {
            throw ES256Key.Failure.unreadable
        }
        defer { BIO_free(bio) }
        guard let key = PEM_read_bio_PUBKEY(bio, nil, nil, nil) else {
            ERR_clear_error()
            throw ES256Key.Failure.unreadable
        }
        guard ES256Key.isP256(key) else {
            EVP_PKEY_free(key)
            throw ES256Key.Failure.notP256
        }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// Whether `signature` (64 bytes, `r ‖ s`) signs `message` under this key.
    public func verify(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard signature.count == 64, let der = Self.der(fromJOSE: signature), let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        let ok = der.withUnsafeBytes { sig in message.withUnsafeBytes { raw in EVP_DigestVerify(context, sig.baseAddress, sig.count, raw.baseAddress, raw.count) } }
        ERR_clear_error()
        return ok == 1
    }

    static func der(fromJOSE signature: [UInt8]) -> [UInt8]? {
        guard let value = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(value) }
        let r = signature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = signature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s, ECDSA_SIG_set0(value, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(value, nil)
        guard length > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var pointer: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(value, &pointer)
        }
        return written == length ? out : nil
    }
}
