/// An ICC v2 RGB display profile whose red and blue primaries are sRGB's blue and red: a pixel stored as pure
/// red in an image carrying it means pure blue. An image that comes out blue was converted through its
/// embedded profile; one that comes out red had it ignored.
enum SwappedPrimariesProfile {
    static func bytes() -> [UInt8] {
        // sRGB primaries adapted to D50 (the PCS white), and D50 itself.
        let red: (Double, Double, Double) = (0.4361, 0.2225, 0.0139)
        let green: (Double, Double, Double) = (0.3851, 0.7169, 0.0971)
        let blue: (Double, Double, Double) = (0.1431, 0.0606, 0.7141)
        let d50: (Double, Double, Double) = (0.9642, 1.0, 0.8249)

        let description = Array("weatherboard test: red and blue swapped".utf8) + [0]
        var desc = signature("desc") + [0, 0, 0, 0] + be32(description.count) + description
        desc += [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0] + [UInt8](repeating: 0, count: 67)
        let gamma22 = signature("curv") + [0, 0, 0, 0] + be32(1) + [0x02, 0x33, 0, 0]
        let tags: [(String, [UInt8])] = [
            ("desc", desc),
            ("wtpt", xyz(d50)),
            ("rXYZ", xyz(blue)),
            ("gXYZ", xyz(green)),
            ("bXYZ", xyz(red)),
            ("rTRC", gamma22),
            ("gTRC", gamma22),
            ("bTRC", gamma22),
        ]

        var table: [UInt8] = be32(tags.count)
        var data: [UInt8] = []
        let dataStart = 128 + 4 + 12 * tags.count
        for (name, body) in tags {
            table += signature(name) + be32(dataStart + data.count) + be32(body.count)
            data += body
            while data.count % 4 != 0 { data.append(0) }
        }
        let size = dataStart + data.count

        var header = be32(size) + [0, 0, 0, 0] + [0x02, 0x10, 0, 0]
        header += signature("mntr") + signature("RGB ") + signature("XYZ ")
        header += [UInt8](repeating: 0, count: 12)  // date
        header += signature("acsp") + [UInt8](repeating: 0, count: 4 + 4 + 4 + 4 + 8 + 4)  // platform … intent
        header += s15Fixed16(d50.0) + s15Fixed16(d50.1) + s15Fixed16(d50.2)
        header += [UInt8](repeating: 0, count: 4 + 16 + 28)  // creator, ID, reserved
        return header + table + data
    }

    private static func signature(_ text: String) -> [UInt8] { Array(text.utf8) }

    private static func be32(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    private static func s15Fixed16(_ value: Double) -> [UInt8] {
        be32(Int((value * 65536).rounded()))
    }

    private static func xyz(_ value: (Double, Double, Double)) -> [UInt8] {
        signature("XYZ ") + [0, 0, 0, 0] + s15Fixed16(value.0) + s15Fixed16(value.1) + s15Fixed16(value.2)
    }
}
