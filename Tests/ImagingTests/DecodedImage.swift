/// A JPEG the processor made, decoded back to pixels by the `vips` CLI (through PPM), for pixel checks.
struct DecodedImage {
    let width: Int
    let height: Int
    let pixels: [UInt8]

    struct Malformed: Error {}

    init(jpeg: [UInt8], name: String) async throws {
        let jpegPath = try Fixtures.write(jpeg, name + ".jpg")
        let ppmPath = Fixtures.path(name + "-decoded.ppm")
        try await Fixtures.run(["vips", "copy", jpegPath, ppmPath])
        try self.init(ppm: Fixtures.read(ppmPath))
    }

    /// Binary PPM (P6, maxval 255), comments allowed in the header.
    init(ppm bytes: [UInt8]) throws {
        var index = 0
        func token() throws -> String {
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "#") {
                    while index < bytes.count, bytes[index] != UInt8(ascii: "\n") { index += 1 }
                } else if bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                    index += 1
                } else {
                    break
                }
            }
            let start = index
            while index < bytes.count, ![0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
            guard index > start else { throw Malformed() }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
        guard try token() == "P6", let width = Int(try token()), let height = Int(try token()), try token() == "255" else {
            throw Malformed()
        }
        index += 1  // the single whitespace after maxval
        guard width > 0, height > 0, bytes.count - index == width * height * 3 else { throw Malformed() }
        self.width = width
        self.height = height
        self.pixels = Array(bytes[index...])
    }

    /// (-1, -1, -1) outside the image, so a wrong size fails the comparison instead of the test process.
    func pixel(_ x: Int, _ y: Int) -> (r: Int, g: Int, b: Int) {
        guard (0..<width).contains(x), (0..<height).contains(y) else { return (-1, -1, -1) }
        let p = (y * width + x) * 3
        return (Int(pixels[p]), Int(pixels[p + 1]), Int(pixels[p + 2]))
    }
}
