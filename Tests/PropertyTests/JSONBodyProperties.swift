import Foundation
import PropertyBased
import Testing
import Vocabulary
import WeatherboardAPI
@testable import WeatherboardServer

/// Request bodies are outside bytes. Each goes through the server's own decoding (`JSONCoding.decodeBody`, which
/// `Request.decodeJSON` calls: the NUL check, `JSONCoding.decoder`, the mapping of `DecodingError`), and the outcome
/// is the wire value or one of the two errors the contract names: 400 `bad_request` (not JSON, not UTF-8, empty) or
/// 422 `invalid_field` naming the field. Nothing else: another error type would answer 500.
@Suite struct JSONBodyProperties {
    /// What the server answered for one body as one wire type.
    enum Outcome: Equatable, CustomStringConvertible {
        case decoded
        case badRequest
        /// 422 `invalid_field`; the field the message names first.
        case invalidField(String)

        var description: String {
            switch self {
            case .decoded: return "decoded"
            case .badRequest: return "400 bad_request"
            case .invalidField(let field): return "422 invalid_field \(field)"
            }
        }
    }

    /// The server's decoding of `data` as `T`: the value, or the outcome of its error. An error other than the
    /// contract's two is recorded as an issue (it would be a 500).
    static func decode<T: Decodable>(_ data: Data, as type: T.Type) -> (T?, Outcome?) {
        do {
            return (try JSONCoding.decodeBody(data, as: T.self), .decoded)
        } catch let error as APIError where error.status.code == 400 && error.code == "bad_request" {
            return (nil, .badRequest)
        } catch let error as APIError where error.status.code == 422 && error.code == "invalid_field" {
            let field = error.message.prefix { $0 != ":" }
            return (nil, .invalidField(String(field)))
        } catch {
            Issue.record("\(T.self) from \(String(decoding: data, as: UTF8.self).debugDescription): \(error) is neither 400 nor 422")
            return (nil, nil)
        }
    }

    /// Decodes `data` as every wire type that reads a request body, and checks what every outcome must be:
    /// - an empty body, or one that is not UTF-8, is 400;
    /// - a body that is not JSON is 400, unless its only fault is a raw NUL inside a string (422 naming it);
    /// - JSON holding a NUL anywhere (a value or a key, known to the type or not) is 422 naming where;
    /// - a decoded value holds exactly the body's strings.
    /// Returns how many types decoded it.
    @discardableResult
    static func checkAll(_ data: Data) -> Int {
        let parsed = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        let nulField = parsed.flatMap { InputTextOracle.firstNUL(in: $0, path: "") }
        func expectCommon(_ outcome: Outcome?, _ type: String) {
            guard let outcome else { return }
            let text = String(decoding: data, as: UTF8.self).debugDescription
            if data.isEmpty || String(data: data, encoding: .utf8) == nil {
                #expect(outcome == .badRequest, "\(type) \(text)")
            } else if let nulField {
                #expect(outcome == .invalidField(nulField.isEmpty ? "body" : nulField), "\(type) \(text)")
            } else if parsed == nil {
                // Not JSON to `JSONSerialization`: 400, unless the server's decoder reads it (it is lazier: a number past
                // a Double's range or a lone surrogate in a property the type ignores), or a raw NUL names a field.
                if !data.contains(0) && !Self.decodersMayDisagree(data) {
                    #expect(outcome == .badRequest, "\(type) \(text)")
                }
            } else if !(parsed is [String: Any]) {
                // Well-formed JSON that is not an object is never a request, and the message names the whole body.
                #expect(outcome == .invalidField("body"), "\(type) \(text)")
            }
        }
        let object = parsed as? [String: Any]
        var decoded = 0

        let (create, createOutcome) = decode(data, as: CreatePostRequest.self)
        expectCommon(createOutcome, "CreatePostRequest")
        if let create, let object {
            decoded += 1
            #expect(create.body == object["body"] as? String && create.weatherType == object["weatherType"] as? String)
            #expect(create.title == object["title"] as? String && create.regionId == object["regionId"] as? String)
            if let location = create.location {
                #expect(location.lat.isFinite && location.lon.isFinite)
            }
        }
        let (patch, patchOutcome) = decode(data, as: PatchPostRequest.self)
        expectCommon(patchOutcome, "PatchPostRequest")
        if let patch, let object {
            decoded += 1
            #expect(patch.body == object["body"] as? String)
            // Absent stays absent; null (only for the title) removes it.
            #expect((patch.title == nil) == (object["title"] == nil))
        }
        let (credentials, credentialsOutcome) = decode(data, as: CredentialsRequest.self)
        expectCommon(credentialsOutcome, "CredentialsRequest")
        if let credentials, let object {
            decoded += 1
            #expect(credentials.username == object["username"] as? String && credentials.password == object["password"] as? String)
        }
        let (block, blockOutcome) = decode(data, as: BlockRequest.self)
        expectCommon(blockOutcome, "BlockRequest")
        if let block, let object {
            decoded += 1
            #expect(block.accountId == object["accountId"] as? String)
        }
        let (ban, banOutcome) = decode(data, as: BanRequest.self)
        expectCommon(banOutcome, "BanRequest")
        if let ban, let object {
            decoded += 1
            #expect(ban.reason == object["reason"] as? String)
            // The server's decoder reads any RFC 3339 time (a fraction, an offset, lower case), and nothing else.
            #expect(ban.until == (object["until"] as? String).flatMap { RFC3339.parse($0) })
        }
        if let object, banOutcome != .decoded, nulField == nil, object["reason"] is String, let until = object["until"] as? String {
            #expect((RFC3339.parse(until) == nil) == (banOutcome == .invalidField("until")), "until \(until.debugDescription): \(String(describing: banOutcome))")
        }
        let (decision, decisionOutcome) = decode(data, as: DecisionRequest.self)
        expectCommon(decisionOutcome, "DecisionRequest")
        if let decision, let object {
            decoded += 1
            #expect(decision.action == object["action"] as? String && decision.note == object["note"] as? String)
        }
        return decoded
    }

    /// A number literal past a Double's range (an exponent of three digits, or 309 digits and more), a `\u`
    /// escape of a surrogate, or a minus sign with no digit after it (`-`, `{"body":-}`, which Foundation's decoder
    /// reads as a number: 422, where `JSONSerialization` says 400): where `JSONSerialization` refuses text the
    /// server's decoder may read.
    static func decodersMayDisagree(_ data: Data) -> Bool {
        let text = String(decoding: data, as: UTF8.self)
        return text.contains(/[eE][+-]?[0-9]{3}/) || text.contains(/[0-9]{309}/) || text.contains(/\\u[dD][89a-fA-F]/)
            || text.contains(/-(?![0-9])/)
    }

    @Test func arbitraryBytes() async {
        await propertyCheck(count: 300, input: Gens.bytes) { bytes in
            Self.checkAll(Data(bytes))
            Self.checkAll(Data("{\"body\":".utf8 + bytes + Array("}".utf8)))
        }
    }

    @Test func arbitraryJSON() async {
        await propertyCheck(count: 400, input: JSONText.value) { text in
            Self.checkAll(Data(text.utf8))
        }
    }

    /// Objects with the wire types' own field names and values of every kind: the decoder gets past the
    /// first key and meets wrong types, nulls, huge and tiny numbers, odd strings and dates.
    @Test func nearMissObjects() async {
        await propertyCheck(count: 500, input: JSONText.nearMiss) { text in
            Self.checkAll(Data(text.utf8))
        }
    }

    /// Well-formed bodies decode, whatever the strings hold (a NUL aside), and a time in any RFC 3339 form is the
    /// same instant.
    @Test func wellFormedBodiesDecode() async throws {
        await propertyCheck(count: 200, input: Gens.text, Gens.text, Gen.double(in: -1e300...1e300)) { rawA, rawB, x in
            let a = rawA.replacingOccurrences(of: "\u{0}", with: "")
            let b = rawB.replacingOccurrences(of: "\u{0}", with: "")
            let encoder = JSONEncoder()
            let create = CreatePostRequest(weatherType: a, category: b, title: a, body: b, regionId: a, location: .init(lat: x, lon: -x))
            let decodedCreate = try JSONCoding.decodeBody(encoder.encode(create), as: CreatePostRequest.self)
            #expect(decodedCreate.body == b && decodedCreate.title == a && decodedCreate.location?.lat == x)
            let credentials = try JSONCoding.decodeBody(encoder.encode(CredentialsRequest(username: a, password: b)), as: CredentialsRequest.self)
            #expect(credentials.username == a && credentials.password == b)
        }
        let patch = try JSONCoding.decodeBody(Data("{\"title\":null}".utf8), as: PatchPostRequest.self)
        #expect(patch.title == .some(nil))
    }

    /// The outcomes the contract names, one body each.
    @Test func specificOutcomes() {
        let cases: [(String, Outcome)] = [
            ("", .badRequest),
            ("{", .badRequest),
            ("{\"username\":\"a\",\"password\":\"b\"", .badRequest),
            ("[]", .invalidField("body")),
            ("\"text\"", .invalidField("body")),
            ("{\"password\":\"b\"}", .invalidField("username")),
            ("{\"username\":null,\"password\":\"b\"}", .invalidField("username")),
            ("{\"username\":5,\"password\":\"b\"}", .invalidField("username")),
            ("{\"username\":\"a\\u0000\",\"password\":\"b\"}", .invalidField("username")),
            ("{\"username\":\"a\",\"password\":\"b\",\"x\":[\"\\u0000\"]}", .invalidField("x[0]")),
            ("{\"username\":\"a\",\"password\":\"b\",\"extra\":{\"y\":1}}", .decoded),
        ]
        for (text, expected) in cases {
            #expect(Self.decode(Data(text.utf8), as: CredentialsRequest.self).1 == expected, "\(text.debugDescription)")
        }
        #expect(Self.decode(Data([0x7B, 0x22, 0x75, 0xFF, 0x22, 0x3A, 0x31, 0x7D]), as: CredentialsRequest.self).1 == .badRequest)
        #expect(Self.decode(Data("{\"username\":\"a\u{0}\",\"password\":\"b\"}".utf8), as: CredentialsRequest.self).1 == .invalidField("username"))
        // Times: what the server's decoder reads (every RFC 3339 form), not what `.iso8601` reads.
        for until in ["2026-11-22T09:33:20Z", "2026-11-22T18:33:20+09:00", "2026-11-22t09:33:20.250z"] {
            let ban = Self.decode(Data("{\"reason\":\"r\",\"until\":\"\(until)\"}".utf8), as: BanRequest.self)
            #expect(ban.0?.until == RFC3339.parse(until), "\(until)")
            #expect(ban.0?.until != nil, "\(until)")
        }
        for until in ["2026-11-22T09:33:20", "2026-02-30T00:00:00Z", "1795340000", "tomorrow"] {
            #expect(Self.decode(Data("{\"reason\":\"r\",\"until\":\"\(until)\"}".utf8), as: BanRequest.self).1 == .invalidField("until"), "\(until)")
        }
        #expect(Self.decode(Data("{\"reason\":\"r\",\"until\":1795340000}".utf8), as: BanRequest.self).1 == .invalidField("until"))
    }
}

extension JSONBodyProperties.Outcome {
    var isInvalidField: Bool {
        if case .invalidField = self { return true }
        return false
    }
}

/// Where the first NUL is in parsed JSON, written independently of `InputText` in the same notation
/// (`location.lat`, `mediaIds[0]`), keys in sorted order.
enum InputTextOracle {
    static func firstNUL(in value: Any, path: String) -> String? {
        if let string = value as? String { return string.unicodeScalars.contains("\u{0}") ? path : nil }
        if let object = value as? [String: Any] {
            for key in object.keys.sorted() {
                let child = path.isEmpty ? key : path + "." + key
                if key.unicodeScalars.contains("\u{0}") { return child }
                if let found = firstNUL(in: object[key] as Any, path: child) { return found }
            }
        }
        if let array = value as? [Any] {
            for (index, element) in array.enumerated() {
                if let found = firstNUL(in: element, path: path + "[\(index)]") { return found }
            }
        }
        return nil
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
            // Each key once: two values under one key are read differently by `JSONSerialization` (the last) and the
            // server's decoder (the first), so the property's oracle cannot judge them (a fresh-clone run drew
            // `"body":"맑음","body":1.79e308`). `nearMiss` repeats a member whole, which both read alike.
            var used: Set<String> = []
            for _ in 0..<count {
                let key = keys.randomElement(using: &rng) ?? "k"
                guard used.insert(key).inserted else { continue }
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
