import Foundation
import Hashing
import Push
import Testing

/// The APNs provider token (CONTRACT §14, issue #34): ES256 signatures through OpenSSL, Apple's `.p8` keys, and when
/// a token is reused or made anew, with the clock passed in.
@Suite("APNs provider tokens")
struct ProviderTokenTests {
    /// A P-256 key as Apple hands one out (`openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`: PKCS#8
    /// PEM, what a `.p8` file holds). Made for these tests; it signs nothing anywhere else.
    static let p8 = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgESALuw25gItNVUIR
RBY6rXX8HI4YxJNsE1IsF3tqWpihRANCAASf3AWmW5LFPuayPNDEzv8Yn1/zHcqm
Mm3ajF7AYcUeL5Vv7/+fX/p48jMW0hcVAn2zGgNM/f535kNHuEsSns/l
-----END PRIVATE KEY-----
"""

    static let p384 = """
-----BEGIN PRIVATE KEY-----
MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDAIiUYtDPiQzPQm7eYD
vgeuwnWoLl9Ktkfekiis8cHDEfmCSOtBA9Qb+/Phb4meNOahZANiAARxEaOWmty4
y2HUsWm43F8DOutWiOliBtY0GjqAzglYNk2x2Ne9h09eoOnTBZmZ09I9L0uQdGyF
/b2zMkYvn1e9UejLJJtGBSnLaj5rdRoO8yae9h1tzUsLNTLFCrA3mho=
-----END PRIVATE KEY-----
"""

    static let rsa = """
-----BEGIN PRIVATE KEY-----
MIICeAIBADANBgkqhkiG9w0BAQEFAASCAmIwggJeAgEAAoGBALCBO0VBhns6K2jb
EJm3+8bnmaeHbZONLC34T8aU+m+r06MolcfsugN3BiHXz15ci6+78mZ3Vm+Rk1mZ
/P8vVO+BSvLsiozf8QiI1ZbcfOgV38Md0dUwZCXSMbu/1A5TrIN/Hu3J9M4Q1UK4
OWHSz2uOTQ4DDsaMnyfl2x/er6SLAgMBAAECgYBCgj/KRfmdv3qSBVIJCmnmNmkQ
1pg0rFKEc/fjlUmVAMM7zNQ7xHkHSzdVU1PBc8/zBTg+4iMA4XMLpVnO8o/nG3+K
sjzb5vY4Szp5SjuZ10ZkCA0a8xeavp8u/Y05NgYJPrgokFSTKgzH5WE6occCbsoc
8glQIf2osPQmdl6TkQJBAN/0YJRBL52q5uOxSxZnwWS68o+dzXUWHVKFvhjksWoo
d2+7GpwmehYh32obyGkTY5HFeXuyYPQ1zCLqY/JsqPkCQQDJwrvANw4/XBXABkJK
nnxCEzWP0amqDJyyCGwcDZ1g8gMIkIr9++d/gZPcKoQJjDgG2VU6wqkL/U/gCmr5
4f6jAkEAvZPLsZQgr5H9E1+AVX4NCqzqKcKGKohG2BVY3w+wU1HgENfM5cP4cwXH
brYIB1KfZcVJWfmc8v0bSa8qXgu3WQJBALadcT57FoQ2nuEdSScs558Or+4qgPyP
SczCXsfNcuLqaeB4o7VbKZ948xHV0Yiqx5M7Zy82PbfCYWeRRl5CNS0CQQCQVTLw
cKsj0xxYawdklO1GXgo3TiTP+nGS7eRsdTaWmt9K/XeVviG+JtJCWOfrJoOvB0vY
uO5Ljmo1cMGiQ7aZ
-----END PRIVATE KEY-----
"""

    /// The JWT's three parts, the first two decoded as JSON.
    static func parts(_ jwt: String) throws -> (header: [String: Any], claims: [String: Any], signature: [UInt8], signingInput: String) {
        let pieces = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(pieces.count == 3)
        let header = try #require(Base64.decode(pieces[0]))
        let claims = try #require(Base64.decode(pieces[1]))
        return (
            try #require(try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any]),
            try #require(try JSONSerialization.jsonObject(with: Data(claims)) as? [String: Any]),
            try #require(Base64.decode(pieces[2])),
            pieces[0] + "." + pieces[1]
        )
    }

    @Test("a token from a .p8 key: header alg ES256 and kid, claims iss and iat, a 64-byte JOSE signature the public key verifies; a changed claim does not verify")
    func tokenFromAppleKey() throws {
        let key = try ES256Key(pem: Self.p8)
        let provider = try ProviderToken(key: key, teamID: "TEAM123456", keyID: "KEY1234567")
        let jwt = try provider.current(now: 1_764_300_000)
        #expect(!jwt.contains("=") && !jwt.contains("+") && !jwt.contains("/"), "base64url without padding")
        let (header, claims, signature, signingInput) = try Self.parts(jwt)
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "KEY1234567")
        #expect(header.count == 2)
        #expect(claims["iss"] as? String == "TEAM123456")
        #expect(claims["iat"] as? Int == 1_764_300_000)
        #expect(claims.count == 2)
        #expect(signature.count == 64)
        let verifier = try ES256PublicKey(pem: key.publicKeyPEM)
        #expect(verifier.verify(signature, of: Array(signingInput.utf8)))
        let forgedClaims = Base64.encode(Array(#"{"iat":1764300000,"iss":"MEAT123456"}"#.utf8), urlSafe: true)
        let forged = String(signingInput.split(separator: ".")[0]) + "." + forgedClaims
        #expect(forged != signingInput)
        #expect(!verifier.verify(signature, of: Array(forged.utf8)))
        #expect(!verifier.verify(Array(signature.reversed()), of: Array(signingInput.utf8)))
        #expect(!verifier.verify(Array(signature.prefix(63)), of: Array(signingInput.utf8)))
        // Another key's public half refuses it.
        #expect(!(try ES256PublicKey(pem: ES256Key.generate().publicKeyPEM)).verify(signature, of: Array(signingInput.utf8)))
    }

    @Test("1,000 signatures, each verifies: r and s are always padded to 32 bytes")
    func everySignatureVerifies() throws {
        let key = ES256Key.generate()
        let verifier = try ES256PublicKey(pem: key.publicKeyPEM)
        for index in 0..<1_000 {
            let message = Array("message \(index)".utf8)
            let signature = try key.sign(message)
            #expect(signature.count == 64)
            #expect(verifier.verify(signature, of: message), "signature \(index)")
        }
    }

    @Test("one token is reused for 40 minutes and made anew after; a clock that went back makes a new one")
    func reuseAndRenewal() throws {
        let provider = try ProviderToken(key: ES256Key.generate(), teamID: "TEAM123456", keyID: "KEY1234567")
        let start = 1_764_300_000
        let first = try provider.current(now: start)
        #expect(try provider.current(now: start + 1) == first)
        #expect(try provider.current(now: start + 40 * 60 - 1) == first)
        let second = try provider.current(now: start + 40 * 60)
        #expect(second != first)
        #expect(try Self.parts(second).claims["iat"] as? Int == start + 40 * 60)
        #expect(try provider.current(now: start + 50 * 60) == second)
        #expect(try provider.current(now: start) != second, "the clock went back past the token: a new one")
        #expect(provider.tokensMade == 3)
    }

    @Test("after ExpiredProviderToken: one new token, however many pushes were refused with the old one")
    func renewalAfterRefusal() throws {
        let provider = try ProviderToken(key: ES256Key.generate(), teamID: "TEAM123456", keyID: "KEY1234567")
        let old = try provider.current(now: 1_764_300_000)
        let renewed = try provider.renew(after: old, now: 1_764_300_600)
        #expect(renewed != old)
        for _ in 0..<100 { #expect(try provider.renew(after: old, now: 1_764_300_601) == renewed) }
        #expect(try provider.current(now: 1_764_300_700) == renewed)
        #expect(provider.tokensMade == 2)
    }

    @Test("keys that are not APNs keys are refused with a reason: P-384, RSA, a public key, garbage, empty, 10 MB, NUL; ids not Apple's")
    func refusedKeys() throws {
        #expect(throws: ES256Key.Failure.notP256) { try ES256Key(pem: Self.p384) }
        #expect(throws: ES256Key.Failure.notP256) { try ES256Key(pem: Self.rsa) }
        #expect(throws: ES256Key.Failure.unreadable) { try ES256Key(pem: ES256Key.generate().publicKeyPEM) }
        #expect(throws: ES256Key.Failure.unreadable) { try ES256Key(pem: "-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n") }
        #expect(throws: ES256Key.Failure.unreadable) { try ES256Key(pem: "") }
        #expect(throws: ES256Key.Failure.unreadable) { try ES256Key(pem: String(repeating: "A", count: 10_000_000)) }
        #expect(throws: ES256Key.Failure.unreadable) { try ES256Key(pem: "\u{0}" + Self.p8) }
        let key = ES256Key.generate()
        for bad in ["", "TEAM12345", "TEAM1234567", "team123456", "TEAM12345\u{0}", "ＴEAM12345"] {
            #expect(throws: ProviderToken.Failure.teamID) { try ProviderToken(key: key, teamID: bad, keyID: "KEY1234567") }
            #expect(throws: ProviderToken.Failure.keyID) { try ProviderToken(key: key, teamID: "TEAM123456", keyID: bad) }
        }
    }
}
