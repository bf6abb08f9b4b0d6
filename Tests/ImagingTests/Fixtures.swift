import Foundation
import Subprocess
import SystemPackage
import Testing

/// Test images, made by the tests themselves: pixels written as PPM in Swift, then turned into JPEG, PNG,
/// WebP and HEIC by the `vips` CLI (libvips-tools), `heif-enc` (libheif-examples) and `exiftool`
/// (libimage-exiftool-perl), all installed by `deploy/dev`.
enum Fixtures {
    struct CommandFailed: Error, CustomStringConvertible {
        let description: String
    }

    /// One directory per test process (about 20 MB). Those of earlier test processes that have ended are
    /// removed here, so runs don't pile up in the temp directory.
    static let directory: String = {
        let files = FileManager.default
        let temp = files.temporaryDirectory
        let prefix = "weatherboard-imaging-"
        for name in (try? files.contentsOfDirectory(atPath: temp.path)) ?? [] where name.hasPrefix(prefix) {
            if let pid = Int32(name.dropFirst(prefix.count)), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH {
                try? files.removeItem(at: temp.appendingPathComponent(name))
            }
        }
        let path = temp.appendingPathComponent(prefix + "\(getpid())").path
        try? files.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    static func path(_ name: String) -> String { directory + "/" + name }

    /// Runs a command (a path, or a name looked up on PATH) and returns its standard output. Async (swift-subprocess): no
    /// thread of the cooperative pool waits for the child.
    @discardableResult
    static func run(_ arguments: [String]) async throws -> String {
        let result = try await Subprocess.run(
            arguments[0].contains("/") ? .path(FilePath(arguments[0])) : .name(arguments[0]), arguments: Arguments(Array(arguments.dropFirst())),
            output: .string(limit: 1 << 20), error: .string(limit: 1 << 20)
        )
        guard case .exited(0) = result.terminationStatus else {
            throw CommandFailed(description: "\(arguments.joined(separator: " ")): \(result.terminationStatus): \(result.standardError)")
        }
        return result.standardOutput
    }

    /// A binary PPM (P6) of `width × height` pixels.
    static func ppm(width: Int, height: Int, pixel: (Int, Int) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
        var bytes = Array("P6\n\(width) \(height)\n255\n".utf8)
        bytes.reserveCapacity(bytes.count + width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let (r, g, b) = pixel(x, y)
                bytes.append(r)
                bytes.append(g)
                bytes.append(b)
            }
        }
        return bytes
    }

    @discardableResult
    static func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let file = path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return file
    }

    static func read(_ file: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
    }

    /// Four quadrants: top-left red, top-right green, bottom-left blue, bottom-right white.
    static func quadrants(width: Int, height: Int) -> [UInt8] {
        ppm(width: width, height: height) { x, y in
            switch (x < width / 2, y < height / 2) {
            case (true, true): (255, 0, 0)
            case (false, true): (0, 255, 0)
            case (true, false): (0, 0, 255)
            case (false, false): (255, 255, 255)
            }
        }
    }

    /// Smooth gradients with some texture, like a photo as far as the codecs care.
    static func gradient(width: Int, height: Int) -> [UInt8] {
        ppm(width: width, height: height) { x, y in
            (UInt8(truncatingIfNeeded: x * 255 / max(width, 1)),
             UInt8(truncatingIfNeeded: y * 255 / max(height, 1)),
             UInt8(truncatingIfNeeded: (x ^ y) & 0x3F + 96))
        }
    }

    /// `ppmName` converted by `vips copy` to `name` (its extension picks the format; `[Q=90]`-style options go
    /// after it).
    @discardableResult
    static func convert(_ ppmName: String, to name: String, options: String = "") async throws -> String {
        try await run(["vips", "copy", path(ppmName), path(name) + options])
        return path(name)
    }

    /// Made once per test process (tests running in parallel share one making, and none reads a half-written
    /// file): 4000 × 3000 JPEG (12 MP), a 400 × 300 gradient enlarged 10×.
    static func twelveMegapixelJPEG() async throws -> String { try await twelveMegapixels.value }
    private static let twelveMegapixels = Task {
        let file = path("12mp.jpg")
        try write(gradient(width: 400, height: 300), "12mp-source.ppm")
        try await run(["vips", "resize", path("12mp-source.ppm"), file + "[Q=90]", "10"])
        return file
    }

    /// Made once per test process: a 10000 × 10000 single-colour PNG (100 MP in about 100 KB).
    static func decompressionBomb() async throws -> String { try await bomb.value }
    private static let bomb = Task {
        let file = path("bomb.png")
        try await run(["vips", "black", file + "[compression=9]", "10000", "10000"])
        return file
    }

    /// Made once per test process: 6000 × 6000 of one colour (36 MP in about 120 KB).
    static func flatPNG36Megapixels() async throws -> String { try await flat36.value }
    private static let flat36 = Task {
        let file = path("flat36.png")
        try await run(["vips", "black", path("flat36.v"), "6000", "6000", "--bands", "3"])
        try await run(["vips", "linear", path("flat36.v"), file, "1", "90", "--uchar"])
        try? FileManager.default.removeItem(atPath: path("flat36.v"))
        return file
    }

    /// `vipsheader -f FIELD file`.
    static func header(_ field: String, _ file: String) async throws -> String {
        try await run(["vipsheader", "-f", field, file]).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
