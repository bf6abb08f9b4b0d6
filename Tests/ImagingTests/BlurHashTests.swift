import Foundation
import Imaging
import Testing

/// BlurHash.swift against PyPI's pure-Python `blurhash` 1.1.5: hashes it computed for formula images are pinned
/// here (`Tests/ImagingTests/blurhash-reference.sh pinned` recomputes them), and the end-to-end test runs it live
/// on the pixels the processor hashes.
@Suite struct BlurHashTests {
    /// Same formula as `formula_image` in blurhash_reference.py.
    static func formulaImage(width: Int, height: Int) -> [UInt8] {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                pixels.append(UInt8((x * 7 + y * 13) % 256))
                pixels.append(UInt8((x * y + 40) % 256))
                pixels.append(UInt8(255 - (x * 3 + y * 5) % 256))
            }
        }
        return pixels
    }

    /// `blurhash-reference.sh pinned` output: width, height, components x, components y, hash.
    static let pinned: [(Int, Int, Int, Int, String)] = [
        (32, 24, 4, 3, "LeHUhbM=m[nCvuRqJ,g2Vh6$o^t5"),
        (17, 9, 4, 3, "LiD*mCEXj^oPEYozjba~WZoLfQfR"),
        (1, 1, 4, 3, "L~01hbg9g9g9g9g9g9g9g9g9g9g9"),
        (64, 3, 4, 3, "L#F|T]RcJ:Av,4XBNyShVyg1WWoL"),
        (32, 24, 1, 1, "00HUhb"),
        (32, 24, 9, 9, "|eHUhbM=m[nCa6r_X8t7a$vuRqJ,g2XQbuWEaia#Vh6$o^t5V^n9X6oeW:V}kV-9n9aOknj[jIf8eaoxnkI@X$aOWDa#bGakXRVxTGw3nSoxj[kAX9nlkAs.r[S|azbHagozWFX7ahSNSNsnahj@ajn+bZn+a|s.r[W;kA"),
        (20, 30, 3, 7, "uoH1.WRGi%iqeuX7RXFvgJAJtPwMnU$inRozerOVa%S4X6"),
    ]

    @Test func matchesThePinnedReferenceHashes() {
        for (width, height, cx, cy, expected) in Self.pinned {
            let hash = BlurHash.encode(rgb: Self.formulaImage(width: width, height: height), width: width, height: height, componentsX: cx, componentsY: cy)
            #expect(hash == expected, "\(width)×\(height) \(cx)×\(cy)")
        }
    }

    @Test func rowPaddingIsSkipped() {
        let (width, height) = (17, 9)
        let tight = Self.formulaImage(width: width, height: height)
        var padded: [UInt8] = []
        for y in 0..<height { padded += tight[(y * width * 3)..<((y + 1) * width * 3)] + [1, 2, 3, 4, 5] }
        #expect(BlurHash.encode(rgb: padded, width: width, height: height, bytesPerRow: width * 3 + 5) == "LiD*mCEXj^oPEYozjba~WZoLfQfR")
    }

    @Test func impossibleSizesGiveNilNotATrap() {
        let pixels = [UInt8](repeating: 0, count: 12)
        #expect(BlurHash.encode(rgb: pixels, width: 0, height: 1) == nil)
        #expect(BlurHash.encode(rgb: pixels, width: 2, height: 3) == nil)
        #expect(BlurHash.encode(rgb: pixels, width: 2, height: 2, bytesPerRow: 5) == nil)
        #expect(BlurHash.encode(rgb: pixels, width: 2, height: 2, bytesPerRow: .max) == nil)
        #expect(BlurHash.encode(rgb: pixels, width: .max, height: .max) == nil)
        #expect(BlurHash.encode(rgb: pixels, width: 2, height: 2, componentsX: 10) == nil)
        #expect(BlurHash.encode(rgb: pixels, width: 2, height: 2, componentsY: 0) == nil)
        #expect(BlurHash.encode(rgb: pixels, width: 2, height: 2) == "L00000fQfQfQfQfQfQfQfQfQfQfQ")
    }

    /// The reference implementation, run now on `pixels` (installs itself into .local/ on first use).
    static func reference(_ pixels: [UInt8], width: Int, height: Int, name: String) async throws -> String {
        let raw = try Fixtures.write(pixels, name + ".rgb")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("blurhash-reference.sh").path
        return try await Fixtures.run([script, "raw", raw, "\(width)", "\(height)"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A processed image's BlurHash is the reference's hash of its preview: an image already smaller than the
    /// preview passes through unchanged (PNG is lossless), so its pixels are the preview's.
    @Test func aProcessedImagesHashIsTheReferenceHashOfItsPreview() async throws {
        let (width, height) = (160, 120)
        var state: UInt32 = 12345
        let noisy = Fixtures.ppm(width: width, height: height) { x, y in
            state = state &* 1_103_515_245 &+ 12345
            let noise = Int(state >> 24) & 0x3F
            return (UInt8((x + noise) % 256), UInt8((y * 2 + noise) % 256), UInt8((x * y / 40 + 30) % 256))
        }
        try Fixtures.write(noisy, "hash-source.ppm")
        let file = try await Fixtures.convert("hash-source.ppm", to: "hash-source.png")
        let pixels = Array(noisy.suffix(width * height * 3))

        let processor = ImageProcessor(threads: 1, maxQueued: 0, timeLimit: .seconds(30))
        let image = try await processor.process(file: file)
        await processor.shutdown()
        #expect(image.previewWidth == width && image.previewHeight == height)

        let expected = try await Self.reference(pixels, width: width, height: height, name: "hash-source")
        #expect(expected.count == 28)
        #expect(BlurHash.encode(rgb: pixels, width: width, height: height) == expected)
        #expect(image.blurhash == expected)
    }
}
