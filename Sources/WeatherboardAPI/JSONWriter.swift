import Foundation

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
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xf)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
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
        string(RFC3339.format(value))
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

/// `2026-11-22T09:30:00Z`: RFC 3339 in UTC, to the second.
public enum RFC3339 {
    public static func format(_ date: Date) -> String {
        var seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        var days = seconds / 86_400
        seconds -= days * 86_400
        if seconds < 0 {
            seconds += 86_400
            days -= 1
        }
        // Howard Hinnant's civil-from-days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        var bytes = [UInt8](repeating: 0, count: 20)
        func put(_ value: Int64, _ at: Int, _ width: Int) {
            var v = value
            for i in stride(from: at + width - 1, through: at, by: -1) {
                bytes[i] = UInt8(48 + v % 10)
                v /= 10
            }
        }
        put(year, 0, 4)
        bytes[4] = 45
        put(month, 5, 2)
        bytes[7] = 45
        put(day, 8, 2)
        bytes[10] = 84
        put(seconds / 3600, 11, 2)
        bytes[13] = 58
        put(seconds / 60 % 60, 14, 2)
        bytes[16] = 58
        put(seconds % 60, 17, 2)
        bytes[19] = 90
        return String(decoding: bytes, as: UTF8.self)
    }
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
