/// The marker segments of a JPEG, up to and including the first SOS, and whether it ends with EOI.
struct JPEGMarkers {
    /// Marker codes (the byte after 0xFF), in file order.
    let markers: [UInt8]
    /// The bytes of all segments before the scan data.
    let headerBytes: [UInt8]
    let endsWithEOI: Bool

    struct Malformed: Error {}

    init(_ bytes: [UInt8]) throws {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { throw Malformed() }
        var markers: [UInt8] = [0xD8]
        var index = 2
        while true {
            guard index + 4 <= bytes.count, bytes[index] == 0xFF else { throw Malformed() }
            let marker = bytes[index + 1]
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2, index + 2 + length <= bytes.count else { throw Malformed() }
            markers.append(marker)
            index += 2 + length
            if marker == 0xDA { break }  // SOS: entropy-coded data follows
        }
        self.markers = markers
        self.headerBytes = Array(bytes[..<index])
        self.endsWithEOI = bytes.suffix(2).elementsEqual([0xFF, 0xD9])
    }

    /// SOI, APP0 (JFIF), DQT, SOFn, DHT, DRI, SOS: what a JPEG needs to decode, and nothing that carries
    /// metadata (APP1–APP15: EXIF, XMP, ICC, IPTC/Photoshop, …; COM: comments).
    static func isCodingMarker(_ marker: UInt8) -> Bool {
        switch marker {
        case 0xD8, 0xE0, 0xDB, 0xC4, 0xDD, 0xDA: true
        case 0xC0...0xCF where marker != 0xC8: true
        default: false
        }
    }
}
