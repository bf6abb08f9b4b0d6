/// Bearer tokens: `wb_` + 30 base62 characters of randomness (≥ 178 bits) + a 6-character base62 CRC32
/// checksum, so secret scanners can recognise a leaked token (as GitHub's tokens can) and a mistyped one
/// is rejected without a database lookup. Only `hash` is ever stored.
public struct Token: Sendable, Equatable {
    public static let prefix = "wb_"
    static let randomLength = 30
    static let checksumLength = 6
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    public let value: String

    public init?(parsing value: String) {
        guard value.hasPrefix(Self.prefix), value.utf8.count == Self.prefix.utf8.count + Self.randomLength + Self.checksumLength else { return nil }
        let body = value.dropFirst(Self.prefix.count)
        guard body.utf8.allSatisfy({ Self.alphabet.contains($0) }) else { return nil }
        let random = String(body.prefix(Self.randomLength))
        guard Self.checksum(of: random) == String(body.suffix(Self.checksumLength)) else { return nil }
        self.value = value
    }

    /// A fresh token from OpenSSL's CSPRNG.
    public static func generate() -> Token {
        var random: [UInt8] = []
        random.reserveCapacity(randomLength)
        // Rejection sampling keeps every character uniform over 62 symbols.
        while random.count < randomLength {
            for byte in SecureRandom.bytes(randomLength * 2) where byte < 248 && random.count < randomLength {
                random.append(alphabet[Int(byte % 62)])
            }
        }
        let text = String(decoding: random, as: UTF8.self)
        return Token(unchecked: prefix + text + checksum(of: text))
    }

    private init(unchecked value: String) { self.value = value }

    /// SHA-256 of the whole token, hex: what the database stores and looks up.
    public var hash: String { Digest.sha256Hex(value) }

    /// The first characters, safe to show in lists of sessions.
    public var displayPrefix: String { String(value.prefix(Self.prefix.count + 4)) }

    static func checksum(of text: String) -> String {
        var n = CRC32.checksum(Array(text.utf8))
        var out = [UInt8](repeating: alphabet[0], count: checksumLength)
        for i in stride(from: checksumLength - 1, through: 0, by: -1) {
            out[i] = alphabet[Int(n % 62)]
            n /= 62
        }
        return String(decoding: out, as: UTF8.self)
    }
}

enum CRC32 {
    static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var c = UInt32(i)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes { crc = table[Int((crc ^ UInt32(b)) & 0xff)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
