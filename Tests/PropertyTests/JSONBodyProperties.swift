import Foundation
import PropertyBased
import Testing
import WeatherboardAPI

/// Request bodies are outside bytes: whatever arrives, decoding the wire types either succeeds or throws.
@Suite struct JSONBodyProperties {
    /// Configured as the server's decoder (`JSONCoding.decoder`: ISO 8601 dates); the admin CLI decodes the
    /// account types from the server's responses.
    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// Decodes `data` as every wire type that reads a body; never traps. Returns how many decoded.
    @discardableResult
    static func decodeAll(_ data: Data) -> Int {
        let decoder = decoder()
        var decoded = 0
        if let request = try? decoder.decode(CreatePostRequest.self, from: data) {
            decoded += 1
            if let location = request.location {
                #expect(location.lat.isFinite && location.lon.isFinite)
            }
        }
        if (try? decoder.decode(PatchPostRequest.self, from: data)) != nil { decoded += 1 }
        if (try? decoder.decode(CredentialsRequest.self, from: data)) != nil { decoded += 1 }
        if (try? decoder.decode(BlockRequest.self, from: data)) != nil { decoded += 1 }
        if (try? decoder.decode(AccountResponse.self, from: data)) != nil { decoded += 1 }
        if (try? decoder.decode(AuthResponse.self, from: data)) != nil { decoded += 1 }
        return decoded
    }

    @Test func arbitraryBytesNeverTrap() async {
        await propertyCheck(count: 300, input: Gens.bytes) { bytes in
            Self.decodeAll(Data(bytes))
            Self.decodeAll(Data("{\"body\":".utf8 + bytes + Array("}".utf8)))
        }
    }

    @Test func arbitraryJSONNeverTraps() async {
        await propertyCheck(count: 400, input: JSONText.value) { text in
            Self.decodeAll(Data(text.utf8))
        }
    }

    /// Objects with the wire types' own field names and values of every kind: the decoder gets past the
    /// first key and meets wrong types, nulls, huge and tiny numbers, odd strings and dates.
    @Test func nearMissObjectsNeverTrap() async {
        await propertyCheck(count: 500, input: JSONText.nearMiss) { text in
            Self.decodeAll(Data(text.utf8))
        }
    }

    /// Well-formed bodies decode, whatever the strings hold.
    @Test func wellFormedBodiesDecode() async throws {
        await propertyCheck(count: 200, input: Gens.text, Gens.text, Gen.double(in: -1e300...1e300)) { a, b, x in
            let encoder = JSONEncoder()
            let create = CreatePostRequest(weatherType: a, category: b, title: a, body: b, regionId: a, location: .init(lat: x, lon: -x))
            let decodedCreate = try Self.decoder().decode(CreatePostRequest.self, from: encoder.encode(create))
            #expect(decodedCreate.body == b && decodedCreate.location?.lat == x)
            let credentials = try Self.decoder().decode(CredentialsRequest.self, from: encoder.encode(CredentialsRequest(username: a, password: b)))
            #expect(credentials.username == a && credentials.password == b)
            let patch = try Self.decoder().decode(PatchPostRequest.self, from: Data("{\"title\":null}".utf8))
            #expect(patch.title == .some(nil))
        }
    }
}

/// JSON text built from random choices (PropertyBased has no recursive generators).
enum JSONText {
    static let fieldNames = [
        "weatherType", "category", "title", "body", "regionId", "location", "lat", "lon", "username", "password",
        "accountId", "id", "kind", "displayName", "role", "banned", "bannedUntil", "createdAt", "account", "token",
        "mediaIds", "", "\\u0000", "body\\u0000", "Body",
    ]

    static let numbers = [
        "0", "-0", "1", "-1", "0.5", "1e400", "-1e400", "1e-400", "1.7976931348623157e308", "1.8e308",
        "4.9e-324", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
        "123456789012345678901234567890123456789", "1E+2", "90", "-90.000000000000001", "180.0000001",
        "0.1e1", "1" + String(repeating: "0", count: 400),
    ]

    static let strings = [
        "", "clearSky", "food", "a", "hello world", "\\u0000", "\\ud800", "\\udc00x", "\\ud83d\\ude00", "\\uFEFF",
        "e\\u0301", "\\\"", "\\\\", "\\/", "2026-11-22T09:30:00Z", "2026-02-30T00:00:00Z", "9999999-01-01T00:00:00Z",
        "-0001-01-01T00:00:00Z", "2026-11-22T09:30:00.123456789Z", "2026-11-22T25:61:61+99:99", "1e400", "NaN",
        "Infinity", "wb_", "🌧️", "맑음", String(repeating: "x", count: 300),
    ]

    static func scalar(_ rng: inout any SeededRandomNumberGenerator) -> String {
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: return "null"
        case 1: return Bool.random(using: &rng) ? "true" : "false"
        case 2: return numbers.randomElement(using: &rng) ?? "0"
        case 3: return "\(Double.random(in: -1e6...1e6, using: &rng))"
        default: return "\"" + (strings.randomElement(using: &rng) ?? "") + "\""
        }
    }

    static func value(_ rng: inout any SeededRandomNumberGenerator, depth: Int, keys: [String]) -> String {
        let choice = depth > 3 ? 0 : Int.random(in: 0..<4, using: &rng)
        switch choice {
        case 1:
            let count = Int.random(in: 0...4, using: &rng)
            var items: [String] = []
            for _ in 0..<count { items.append(value(&rng, depth: depth + 1, keys: keys)) }
            return "[" + items.joined(separator: ",") + "]"
        case 2, 3:
            let count = Int.random(in: 0...6, using: &rng)
            var members: [String] = []
            for _ in 0..<count {
                let key = keys.randomElement(using: &rng) ?? "k"
                members.append("\"\(key)\":" + value(&rng, depth: depth + 1, keys: keys))
            }
            return "{" + members.joined(separator: ",") + "}"
        default:
            return scalar(&rng)
        }
    }

    /// Any JSON value, keys from the wire types' names and a few others.
    static let value = Generator<String, Shrink.None<String>> { rng in
        value(&rng, depth: 0, keys: fieldNames + ["x", "0"])
    }

    /// An object that is almost one of the wire types: the right keys, every kind of value; sometimes with
    /// a duplicated key or a valid location.
    static let nearMiss = Generator<String, Shrink.None<String>> { rng in
        var members: [String] = []
        for name in fieldNames where Int.random(in: 0..<3, using: &rng) != 0 {
            let v: String
            switch Int.random(in: 0..<4, using: &rng) {
            case 0 where name == "location":
                v = "{\"lat\":\(numbers.randomElement(using: &rng) ?? "0"),\"lon\":\(numbers.randomElement(using: &rng) ?? "0")}"
            case 0 where name == "account":
                v = value(&rng, depth: 2, keys: fieldNames)
            case 0, 1:
                v = "\"" + (strings.randomElement(using: &rng) ?? "") + "\""
            default:
                v = value(&rng, depth: 2, keys: fieldNames)
            }
            members.append("\"\(name)\":\(v)")
        }
        members.shuffle(using: &rng)
        if let first = members.first, Bool.random(using: &rng) { members.append(first) }
        return "{" + members.joined(separator: ",") + "}"
    }
}
