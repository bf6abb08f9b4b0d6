import Foundation
import Vocabulary

/// A minimal, allocation-light JSON writer for the hot response types (posts, pages of posts, media, weather,
/// and whatever holds them), where Foundation's `JSONEncoder` was the largest single cost of a request. Output
/// is compact JSON with keys in sorted order, as `JSONEncoder` with `.sortedKeys` would write them.
///
/// Each response type has exactly one encoding: a `JSONWritable` type is `Decodable` but never `Encodable`
/// (the server's `jsonResponse` has one overload per protocol, so a type that were both would not compile).
/// `JSONWriterTests` decodes every writer's output back with `JSONDecoder`.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Copy runs of bytes that need no escaping in one go; escape the rest.
            var runStart = 0
            for i in 0..<utf8.count {
                let byte = utf8[i]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if runStart < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
                escape(byte)
                runStart = i + 1
            }
            if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): raw("\\\"")
        case UInt8(ascii: "\\"): raw("\\\\")
        case 0x0A: raw("\\n")
        case 0x0D: raw("\\r")
        case 0x09: raw("\\t")
        default:
            let hex: StaticString = "0123456789abcdef"
            raw("\\u00")
            hex.withUTF8Buffer { digits in
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0xf)])
            }
        }
    }

    public mutating func optionalString(_ value: String?) {
        if let value { string(value) } else { raw("null") }
    }

    public mutating func optionalDouble(_ value: Double?) {
        if let value { double(value) } else { raw("null") }
    }

    /// `[a,b,…]`, each element writing itself.
    public mutating func array(_ values: [some JSONWritable]) {
        raw("[")
        for (i, value) in values.enumerated() {
            if i > 0 { raw(",") }
            value.write(to: &self)
        }
        raw("]")
    }

    public mutating func bool(_ value: Bool) {
        value ? raw("true") : raw("false")
    }

    public mutating func int(_ value: Int) {
        // Digits right to left in a stack buffer, then one append: no `String` per number.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(48 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    public mutating func double(_ value: Double) {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
            int(Int(value))
        } else if value.isFinite {
            bytes.append(contentsOf: "\(value)".utf8)
        } else {
            raw("null")
        }
    }

    public mutating func date(_ value: Date) {
        bytes.append(UInt8(ascii: "\""))
        RFC3339.write(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func key(_ name: StaticString, first: Bool = false) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        raw("\":")
    }
}

/// A value that can write itself with `JSONWriter`.
public protocol JSONWritable {
    func write(to writer: inout JSONWriter)
    /// Bytes to reserve before writing, so that a page of posts is written without growing the buffer.
    var jsonCapacity: Int { get }
}

extension JSONWritable {
    public var jsonCapacity: Int { 1024 }
}
