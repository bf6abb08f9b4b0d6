import Board
import Foundation
import Hashing
import PropertyBased
import Testing
import Vocabulary
import Weather

@Suite struct CursorProperties {
    @Test func encodeThenDecodeRoundTrips() async throws {
        await propertyCheck(count: 300, input: Gen.int(in: 1...Int.max)) { id in
            #expect(Cursor.decode(Cursor.encode(id)) == id)
        }
    }

    /// Whatever a client sends as `cursor=`: either exactly a cursor the server could have issued, or nil (a 400).
    @discardableResult
    static func checkDecode(_ text: String) -> Bool {
        guard let id = Cursor.decode(text) else { return false }
        #expect(id > 0)
        #expect(Cursor.encode(id) == text, "\(text.debugDescription) decoded to \(id)")
        return true
    }

    @Test func arbitraryStringsDecodeCanonicallyOrNil() async {
        await propertyCheck(count: 400, input: Gens.text) { Self.checkDecode($0) }
    }

    @Test func base64LookingStringsDecodeCanonicallyOrNil() async {
        await propertyCheck(count: 400, input: Gens.string(from: Gens.base64Alphabet, length: 0...24)) { Self.checkDecode($0) }
    }

    /// The base64 of arbitrary bytes after the version tag: numbers with signs, zeros, spaces, overflow.
    @Test func taggedPayloadsDecodeCanonicallyOrNil() async {
        let payload = Generator<String, Shrink.None<String>> { rng in
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: return "c1:" + Gens.numberText(&rng, inRange: 1...Int.max)
            case 1: return "c1:\(Int.random(in: Int.min...Int.max, using: &rng))"
            case 2: return "c1:" + String(repeating: "9", count: Int.random(in: 1...40, using: &rng))
            case 3: return "c1:\(Int.random(in: 1...1000, using: &rng))\u{0}"
            case 4: return "c2:\(Int.random(in: 1...1000, using: &rng))"
            default:
                var bytes = Array("c1:".utf8)
                for _ in 0..<Int.random(in: 0...12, using: &rng) { bytes.append(UInt8.random(in: 0...255, using: &rng)) }
                return String(decoding: bytes, as: UTF8.self)
            }
        }
        let tally = ParseTally()
        await propertyCheck(count: 400, input: payload, Gen.bool) { payload, urlSafe in
            let text = Gens.encodeBase64(Array(payload.utf8), urlSafe: urlSafe)
            tally.record(Self.checkDecode(text))
            Self.checkDecode(text + "=")
            Self.checkDecode(text + "==")
        }
        // A positive canonical number, URL-safe and unpadded: 72-88 of the 400 in three runs.
        #expect(tally.count >= 20, "\(tally.count) of 400 payloads decoded")
    }
}

@Suite struct TokenProperties {
    @Test func generatedTokensParse() async {
        await propertyCheck(count: 100, input: Gen.always(())) { _ in
            let token = Token.generate()
            #expect(Token(parsing: token.value) == token)
            #expect(token.value.utf8.count == 39)
        }
    }

    @Test func arbitraryStringsNeverTrap() async {
        await propertyCheck(count: 400, input: Gens.text) { text in
            for candidate in [text, "wb_" + text] {
                if let token = Token(parsing: candidate) {
                    #expect(token.value == candidate)
                }
            }
        }
    }

    /// A generated token with one character changed (or cut, or extended) is rejected.
    @Test func mistypedTokensAreRejected() async {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        await propertyCheck(count: 300, input: Gen.int(in: 3...38), Gen.int(in: 0...61), Gen.int(in: 0...2)) { index, replacement, mode in
            var characters = Array(Token.generate().value)
            switch mode {
            case 0:
                guard characters[index] != alphabet[replacement] else { return }
                characters[index] = alphabet[replacement]
            case 1: characters.remove(at: index)
            default: characters.insert(alphabet[replacement], at: index)
            }
            let mistyped = String(characters)
            // CRC32 catches every single-character substitution in the random part (a burst under 32 bits),
            // a changed checksum no longer matches, and a cut or extended token has the wrong length.
            #expect(Token(parsing: mistyped) == nil, "\(mistyped)")
        }
    }
}

@Suite struct Base64Properties {
    @Test func encodeThenDecodeRoundTrips() async {
        await propertyCheck(count: 400, input: Gens.bytes, Gen.bool) { bytes, urlSafe in
            let text = Base64.encode(bytes, urlSafe: urlSafe)
            #expect(text == Gens.encodeBase64(bytes, urlSafe: urlSafe))
            #expect(Base64.decode(text) == bytes)
            // Padded to a multiple of four is accepted too.
            let padded = text + String(repeating: "=", count: (4 - text.count % 4) % 4)
            #expect(Base64.decode(padded) == bytes)
        }
    }

    /// Whatever decodes is the canonical encoding of its bytes (give or take trailing padding and the
    /// choice of alphabet); everything else is nil, never a trap.
    @discardableResult
    static func checkDecode(_ text: String) -> Bool {
        guard let bytes = Base64.decode(text) else { return false }
        let unpadded = text.hasSuffix("==") ? String(text.dropLast(2)) : text.hasSuffix("=") ? String(text.dropLast()) : text
        let standard = unpadded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        #expect(Base64.encode(bytes) == standard, "\(text.debugDescription)")
        return true
    }

    @Test func arbitraryStringsDecodeCanonicallyOrNil() async {
        await propertyCheck(count: 400, input: Gens.text) { Self.checkDecode($0) }
    }

    @Test func alphabetStringsDecodeCanonicallyOrNil() async {
        let tally = ParseTally()
        await propertyCheck(count: 600, input: Gens.string(from: Gens.base64Alphabet, length: 0...20)) { tally.record(Self.checkDecode($0)) }
        // 159-169 of the 600 in three runs.
        #expect(tally.count >= 60, "\(tally.count) of 600 decoded")
    }
}

/// `GET /v1/regions?cursor=` has its own cursor (rank, population, id).
@Suite struct RegionCursorProperties {
    @Test func tokensRoundTrip() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...1), Gen.int(in: 0...Int.max), Gen.int(in: 1...Int.max)) { rank, population, id in
            let cursor = RegionStore.SearchPosition(rank: rank, population: population, id: id)
            #expect(RegionStore.SearchPosition(token: cursor.token) == cursor)
        }
    }

    /// A rank, a population and an id in range, written as `token` writes them.
    static func canonicalParts(_ rng: inout any SeededRandomNumberGenerator) -> [String] {
        ["\(Int.random(in: 0...1, using: &rng))", "\(Int.random(in: 0...Int.max, using: &rng))", "\(Int.random(in: 1...Int.max, using: &rng))"]
    }

    /// Arbitrary text, and base64url of arbitrary `a:b:c` payloads: a cursor or nil, never a trap.
    @Test func arbitraryTokensNeverTrap() async {
        let payload = Generator<String, Shrink.None<String>> { rng in
            var parts = (0..<Int.random(in: 1...4, using: &rng)).map { _ in Gens.numberText(&rng, inRange: 0...Int.max) }
            // One in four as the server writes them, so acceptance is exercised too.
            if Int.random(in: 0..<4, using: &rng) == 0 { parts = Self.canonicalParts(&rng) }
            return Gens.encodeBase64(Array(parts.joined(separator: ":").utf8), urlSafe: true)
        }
        let tally = ParseTally()
        await propertyCheck(count: 300, input: Gens.text, payload) { text, token in
            for candidate in [text, token] {
                let cursor = RegionStore.SearchPosition(token: candidate)
                tally.record(cursor != nil)
                if let cursor {
                    #expect((0...1).contains(cursor.rank) && cursor.population >= 0 && cursor.id > 0)
                }
            }
        }
        // The canonical quarter of the tokens: about 75.
        #expect(tally.count >= 25, "\(tally.count) of 600 decoded")
    }

    /// Only the exact text `token` writes decodes: the same keys spelled with `+05`, padding, the standard
    /// alphabet or a trailing byte are not cursors (before issue #14 the region cursor accepted some of these).
    @Test func tokensDecodeCanonicallyOrNil() async {
        let payload = Generator<[UInt8], Shrink.None<[UInt8]>> { rng in
            var parts = (0..<Int.random(in: 2...4, using: &rng)).map { _ in Gens.numberText(&rng, inRange: 0...Int.max) }
            if Int.random(in: 0..<4, using: &rng) == 0 { parts = Self.canonicalParts(&rng) }
            var bytes = Array(parts.joined(separator: ":").utf8)
            if Int.random(in: 0..<4, using: &rng) == 0 { bytes.append(UInt8.random(in: 0...255, using: &rng)) }
            return bytes
        }
        let tally = ParseTally()
        await propertyCheck(count: 400, input: payload, Gen.bool) { bytes, urlSafe in
            let text = Gens.encodeBase64(bytes, urlSafe: urlSafe)
            for candidate in [text, text + "=", text + "=="] {
                let cursor = RegionStore.SearchPosition(token: candidate)
                tally.record(cursor != nil)
                if let cursor {
                    #expect(cursor.token == candidate, "\(candidate.debugDescription) decoded to \(cursor)")
                }
            }
        }
        // A canonical payload, URL-safe, with no trailing byte, unpadded: about 400 × 1/4 × 1/2 × 3/4 = 37.
        #expect(tally.count >= 12, "\(tally.count) of 1,200 decoded")
        #expect(RegionStore.SearchPosition(token: Gens.encodeBase64(Array("0:05:7".utf8), urlSafe: true)) == nil)
        #expect(RegionStore.SearchPosition(token: Gens.encodeBase64(Array("0:+5:7".utf8), urlSafe: true)) == nil)
        #expect(RegionStore.SearchPosition(token: Gens.encodeBase64(Array("0:5:7".utf8), urlSafe: true) + "=") == nil)
        #expect(RegionStore.SearchPosition(token: Gens.encodeBase64(Array("0:5:7".utf8), urlSafe: true)) == .init(rank: 0, population: 5, id: 7))
    }
}
