import Foundation
import Vocabulary

/// A minimal, allocation-light JSON writer for the hot response types (posts and pages of posts), where
/// Foundation's `JSONEncoder` was the largest single cost of a request. Output is compact JSON with keys
/// in a fixed order; `JSONWriterTests` checks it decodes to what `JSONEncoder` produces.
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

    public mutating func bool(_ value: Bool) {
        value ? raw("true") : raw("false")
    }

    public mutating func int(_ value: Int) {
        bytes.append(contentsOf: String(value).utf8)
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
}

extension PostResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("author", first: true)
        w.raw("{\"displayName\":")
        w.string(author.displayName)
        w.raw(",\"id\":")
        w.string(author.id)
        w.raw("}")
        w.key("body")
        w.string(body)
        w.key("category")
        w.string(category)
        w.key("createdAt")
        w.date(createdAt)
        w.key("edited")
        w.bool(edited)
        w.key("id")
        w.string(id)
        w.key("isMine")
        w.bool(isMine)
        w.key("media")
        w.raw("[")
        for (i, item) in media.enumerated() {
            if i > 0 { w.raw(",") }
            item.write(to: &w)
        }
        w.raw("]")
        w.key("region")
        w.raw("{\"countryCode\":")
        w.string(region.countryCode)
        if let weather = region.currentWeather {
            w.raw(",\"currentWeather\":")
            if let weather { weather.write(to: &w) } else { w.raw("null") }
        }
        w.raw(",\"id\":")
        w.string(region.id)
        w.raw(",\"name\":")
        w.string(region.name)
        w.raw("}")
        if let revisions {
            w.key("revisions")
            w.raw("[")
            for (i, revision) in revisions.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("{\"body\":")
                w.string(revision.body)
                w.raw(",\"category\":")
                w.string(revision.category)
                w.raw(",\"replacedAt\":")
                w.date(revision.replacedAt)
                w.raw(",\"title\":")
                w.optionalString(revision.title)
                w.raw(",\"weatherType\":")
                w.string(revision.weatherType)
                w.raw("}")
            }
            w.raw("]")
        }
        if let status {
            w.key("status")
            w.string(status)
        }
        w.key("title")
        w.optionalString(title)
        w.key("updatedAt")
        w.date(updatedAt)
        w.key("weatherType")
        w.string(weatherType)
        w.raw("}")
    }
}

extension MediaResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("alt", first: true)
        w.optionalString(alt)
        w.key("blurhash")
        w.string(blurhash)
        w.key("byteSize")
        w.int(byteSize)
        w.key("contentType")
        w.string(contentType)
        w.key("createdAt")
        w.date(createdAt)
        w.key("height")
        w.int(height)
        w.key("id")
        w.string(id)
        w.key("previewUrl")
        w.string(previewUrl)
        w.key("url")
        w.string(url)
        w.key("width")
        w.int(width)
        w.raw("}")
    }
}

extension WeatherResponse: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("cloudiness", first: true)
        w.double(cloudiness)
        w.key("description")
        w.string(description)
        w.key("feelsLike")
        w.double(feelsLike)
        w.key("fetchedAt")
        w.date(fetchedAt)
        w.key("humidity")
        w.double(humidity)
        w.key("observedAt")
        w.date(observedAt)
        w.key("pressure")
        if let pressure { w.double(pressure) } else { w.raw("null") }
        w.key("provider")
        w.string(provider)
        w.key("regionId")
        w.string(regionId)
        w.key("stale")
        w.bool(stale)
        w.key("temperature")
        w.double(temperature)
        w.key("units")
        w.string(units)
        w.key("uvIndex")
        if let uvIndex { w.double(uvIndex) } else { w.raw("null") }
        w.key("weatherType")
        w.string(weatherType)
        w.key("windSpeed")
        w.double(windSpeed)
        w.raw("}")
    }
}

extension Page: JSONWritable where Item: JSONWritable {
    public func write(to w: inout JSONWriter) {
        w.raw("{\"items\":[")
        for (i, item) in items.enumerated() {
            if i > 0 { w.raw(",") }
            item.write(to: &w)
        }
        w.raw("],\"nextCursor\":")
        w.optionalString(nextCursor)
        w.raw("}")
    }
}
