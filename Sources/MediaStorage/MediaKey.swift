import Hashing

/// Object keys: random, never derived from user input, and checked before any I/O.
public enum MediaKey {
    /// The characters a key may hold.
    static let allowed: Set<UInt8> = Set("abcdefghijklmnopqrstuvwxyz0123456789/._-".utf8)
    /// RFC 4648 base32, lower-cased.
    private static let base32 = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)
    /// Longest key accepted (S3 allows 1024 bytes; file systems 255 per name).
    static let maximumLength = 512

    /// 160 bits from OpenSSL's CSPRNG as 32 base32 characters (`[a-z2-7]`): unguessable, safe in a path and a URL.
    public static func random() -> String {
        let bytes = SecureRandom.bytes(20)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        // 20 bytes = 160 bits = exactly 32 groups of 5 bits.
        var buffer: UInt64 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt64(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(base32[Int((buffer >> UInt64(bits)) & 0x1f)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `key` may name an object: 1...512 characters of `[a-z0-9/._-]`, segments separated by single `/`,
    /// no leading or trailing `/`, no `..` anywhere, and no segment starting with `.` (no hidden files, no
    /// clash with the local store's temporary files).
    public static func isValid(_ key: String) -> Bool {
        let utf8 = key.utf8
        guard !utf8.isEmpty, utf8.count <= maximumLength else { return false }
        guard utf8.allSatisfy({ allowed.contains($0) }) else { return false }
        guard !key.contains("..") else { return false }
        for segment in utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            guard let first = segment.first, first != UInt8(ascii: ".") else { return false }
        }
        return true
    }

    /// Throws ``MediaStoreError/Kind/invalidKey`` unless ``isValid(_:)``.
    static func validate(_ key: String) throws(MediaStoreError) {
        guard isValid(key) else { throw MediaStoreError(.invalidKey, key: key, message: "not a valid media key") }
    }
}
