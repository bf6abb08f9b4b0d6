import Board
import Hashing
import PropertyBased
import Testing

/// Stored password-hash strings come from the database, which a bad migration, a restore or an attacker with
/// write access can fill with anything. Parsing one must be total and verifying a malformed one is `false`.
@Suite struct PasswordHashProperties {
    /// The policy, stated independently of the implementation: scrypt's cost parameters, salt and key sizes.
    static let logN = 1...20
    static let r = 1...32
    static let p = 1...16
    static let saltBytes = 8...64
    static let keyBytes = 16...64

    /// Cheap parameters so that the hashes the tests do compute stay fast.
    static let cheap = PasswordHash.Parameters(logN: 4, r: 1, p: 1)

    static func isCanonical(_ text: String, in range: ClosedRange<Int>) -> Bool {
        guard let value = Int(text), range.contains(value) else { return false }
        return String(value) == text
    }

    /// `$scrypt$ln=…,r=…,p=…$salt$key` with at least one parameter that is not a canonical in-range number.
    static let tampered = Generator<String, Shrink.None<String>> { rng in
        var ln = Gens.numberText(&rng, inRange: 1...10)
        var r = Gens.numberText(&rng, inRange: 1...4)
        var p = Gens.numberText(&rng, inRange: 1...2)
        if isCanonical(ln, in: logN), isCanonical(r, in: Self.r), isCanonical(p, in: Self.p) {
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: ln = "\(Int.random(in: 21...Int.max, using: &rng))"
            case 1: r = "\(Int.random(in: 1 << 40...Int.max, using: &rng))"
            default: p = "\(Int.random(in: 1 << 40...Int.max, using: &rng))"
            }
        }
        let salt = Gens.randomBase64(&rng, bytes: 16...16)
        let key = Gens.randomBase64(&rng, bytes: 32...32)
        return "$scrypt$ln=\(ln),r=\(r),p=\(p)$\(salt)$\(key)"
    }

    @Test func arbitraryStringsNeverTrap() async {
        await propertyCheck(count: 400, input: Gens.text) { text in
            for candidate in [text, "$scrypt$" + text, "$scrypt$ln=" + text, "$scrypt$ln=4,r=1,p=1$" + text] {
                if let parsed = PasswordHash(encoded: candidate) {
                    // Only canonical strings parse: what is stored is exactly what the parser accepts.
                    #expect(parsed.encoded == candidate)
                }
            }
        }
    }

    @Test func tamperedParametersAreRejectedAndNeverVerify() async throws {
        let hasher = PasswordHasher(threads: 1, maxWaiting: 1_000, parameters: Self.cheap)
        await propertyCheck(count: 300, input: Self.tampered, Gens.text) { encoded, password in
            // Verify first: on a malformed row it must answer false, not trap or hash with absurd costs.
            let ok = try await hasher.verify(password, encoded: encoded)
            #expect(!ok)
            #expect(PasswordHash(encoded: encoded) == nil, "accepted \(encoded)")
            #expect(hasher.needsRehash(encoded))
        }
        await hasher.shutdown()
    }

    /// In-range parameters with salts and keys of any length (and sometimes not base64 at all).
    @Test func saltAndKeyLengthsAreBounded() async {
        let input = Generator<(String, Int?, Int?), Shrink.None<(String, Int?, Int?)>> { rng in
            func part(_ rng: inout any SeededRandomNumberGenerator) -> (String, Int?) {
                if Int.random(in: 0..<8, using: &rng) == 0 {
                    return ("not base64!", nil)
                }
                let count = Int.random(in: 0...100, using: &rng)
                return (Gens.randomBase64(&rng, bytes: count...count), count)
            }
            let (salt, saltCount) = part(&rng)
            let (key, keyCount) = part(&rng)
            return ("$scrypt$ln=4,r=1,p=1$\(salt)$\(key)", saltCount, keyCount)
        }
        let tally = ParseTally()
        await propertyCheck(count: 300, input: input) { encoded, saltCount, keyCount in
            let valid = saltCount.map(Self.saltBytes.contains) == true && keyCount.map(Self.keyBytes.contains) == true
            let parsed = PasswordHash(encoded: encoded)
            tally.record(parsed != nil)
            #expect((parsed != nil) == valid, "\(encoded)")
            if let parsed { #expect(parsed.encoded == encoded) }
        }
        // Both lengths in range one time in about four: 69 of the 300 in a run.
        #expect(tally.count >= 25, "\(tally.count) of 300 parsed")
    }

    /// Well-formed hashes within the policy parse, re-encode to themselves and verify only their password.
    @Test func createThenVerifyRoundTrips() async throws {
        let input = zip(Gen.int(in: 1...6), Gen.int(in: 1...4), Gen.int(in: 1...3), Gens.text)
        await propertyCheck(count: 40, input: input) { logN, r, p, password in
            let parameters = PasswordHash.Parameters(logN: logN, r: r, p: p)
            let hash = try PasswordHash.create(password: password, parameters: parameters)
            let parsed = try #require(PasswordHash(encoded: hash.encoded))
            #expect(parsed == hash)
            #expect(parsed.parameters == parameters)
            #expect(parsed.verify(password))
            #expect(!parsed.verify(password + "x"))
        }
    }
}
