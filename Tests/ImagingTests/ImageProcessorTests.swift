import Foundation
import Imaging
import Testing

/// Issue #15 (CONTRACT §8): every upload decoded by real libvips and re-encoded as an upright sRGB JPEG with no
/// metadata, a preview and a BlurHash; hostile files refused before they cost anything.
@Suite(.serialized) struct ImageProcessorTests {
    static func withProcessor<T>(
        threads: Int = 2,
        maxQueued: Int = 8,
        timeLimit: Duration = .seconds(30),
        maxPixels: Int = 40_000_000,
        _ body: (ImageProcessor) async throws -> T
    ) async throws -> T {
        let processor = ImageProcessor(threads: threads, maxQueued: maxQueued, timeLimit: timeLimit, maxPixels: maxPixels)
        do {
            let result = try await body(processor)
            await processor.shutdown()
            return result
        } catch {
            await processor.shutdown()
            throw error
        }
    }

    static func expectError(_ expected: ImageError, _ file: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await withProcessor { processor in
            do {
                let image = try await processor.process(file: file)
                Issue.record("expected \(expected), got a \(image.width)×\(image.height) image", sourceLocation: sourceLocation)
            } catch let error as ImageError {
                #expect(error == expected, sourceLocation: sourceLocation)
            }
        }
    }

    /// No APP1–APP15 (EXIF, XMP, ICC, IPTC), no COM: only what decoding needs.
    static func expectNoMetadata(_ jpeg: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let segments = try JPEGMarkers(jpeg)
        let extra = segments.markers.filter { !JPEGMarkers.isCodingMarker($0) }
        #expect(extra.isEmpty, "metadata markers: \(extra.map { String($0, radix: 16) })", sourceLocation: sourceLocation)
        #expect(segments.endsWithEOI, sourceLocation: sourceLocation)
        let header = segments.headerBytes
        let found = ["Exif", "http://ns.adobe.com", "ICC_PROFILE", "Photoshop", "GPS"].filter { contains(header, Array($0.utf8)) }
        #expect(found.isEmpty, "metadata in the header: \(found)", sourceLocation: sourceLocation)
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    static func near(_ pixel: (r: Int, g: Int, b: Int), _ expected: (Int, Int, Int), tolerance: Int = 40) -> Bool {
        abs(pixel.r - expected.0) <= tolerance && abs(pixel.g - expected.1) <= tolerance && abs(pixel.b - expected.2) <= tolerance
    }

    // MARK: Metadata and orientation

    @Test func exifOrientationSixAndGPSComeOutUprightWithNoMetadata() async throws {
        // Stored 400 × 200: top-left red, top-right green, bottom-left blue, bottom-right white; orientation 6
        // says "rotate 90° clockwise to show".
        try Fixtures.write(Fixtures.quadrants(width: 400, height: 200), "oriented.ppm")
        let file = try await Fixtures.convert("oriented.ppm", to: "oriented.jpg", options: "[Q=95]")
        try await Fixtures.run([
            "exiftool", "-q", "-overwrite_original", "-Orientation#=6",
            "-GPSLatitude=60.1699", "-GPSLatitudeRef=N", "-GPSLongitude=24.9384", "-GPSLongitudeRef=E",
            "-XMP-dc:Description=secret place", "-IPTC:Keywords=home", "-Comment=taken at home", file,
        ])
        // The fixture really carries what must go.
        let input = try JPEGMarkers(Fixtures.read(file))
        #expect(input.markers.contains(0xE1) && input.markers.contains(0xFE) && input.markers.contains(0xED))
        #expect(try await Fixtures.header("orientation", file) == "6")

        let image = try await Self.withProcessor { try await $0.process(file: file) }
        #expect(image.source == .jpeg)
        try Self.expectNoMetadata(image.full)
        try Self.expectNoMetadata(image.preview)

        // Upright: 200 wide, 400 high, and the picture turned clockwise.
        #expect(image.width == 200 && image.height == 400)
        let decoded = try await DecodedImage(jpeg: image.full, name: "oriented-out")
        #expect(decoded.width == 200 && decoded.height == 400)
        #expect(Self.near(decoded.pixel(150, 100), (255, 0, 0)), "top-right is red: \(decoded.pixel(150, 100))")
        #expect(Self.near(decoded.pixel(50, 100), (0, 0, 255)), "top-left is blue: \(decoded.pixel(50, 100))")
        #expect(Self.near(decoded.pixel(150, 300), (0, 255, 0)), "bottom-right is green: \(decoded.pixel(150, 300))")
        #expect(Self.near(decoded.pixel(50, 300), (255, 255, 255)), "bottom-left is white: \(decoded.pixel(50, 300))")
        let preview = try await DecodedImage(jpeg: image.preview, name: "oriented-preview")
        #expect(preview.width == image.previewWidth && preview.height == image.previewHeight)
        #expect(Self.near(preview.pixel(150, 100), (255, 0, 0)), "preview top-right is red: \(preview.pixel(150, 100))")
    }

    // MARK: Sizes

    @Test func twelveMegapixelsShrinkToTheLimitsKeepingTheAspect() async throws {
        let file = try await Fixtures.twelveMegapixelJPEG()
        let image = try await Self.withProcessor { try await $0.process(file: file) }
        #expect(image.width == 2048 && image.height == 1536)
        #expect(image.previewWidth == 640 && image.previewHeight == 480)
        let full = try await DecodedImage(jpeg: image.full, name: "12mp-out")
        #expect(full.width == 2048 && full.height == 1536)
        let preview = try await DecodedImage(jpeg: image.preview, name: "12mp-preview")
        #expect(preview.width == 640 && preview.height == 480)
        try Self.expectNoMetadata(image.full)
    }

    @Test func smallImagesAreNotEnlarged() async throws {
        try Fixtures.write(Fixtures.gradient(width: 300, height: 200), "small.ppm")
        let file = try await Fixtures.convert("small.ppm", to: "small.png")
        let image = try await Self.withProcessor { try await $0.process(file: file) }
        #expect(image.width == 300 && image.height == 200)
        #expect(image.previewWidth == 300 && image.previewHeight == 200)
    }

    @Test func tallImagesFitByTheirLongSide() async throws {
        try Fixtures.write(Fixtures.gradient(width: 500, height: 3000), "tall.ppm")
        let file = try await Fixtures.convert("tall.ppm", to: "tall.jpg")
        let image = try await Self.withProcessor { try await $0.process(file: file) }
        #expect(image.height == 2048 && abs(image.width - 341) <= 1)
        #expect(image.previewHeight == 640 && abs(image.previewWidth - 107) <= 1)
    }

    // MARK: Formats

    @Test func heicComesBackAsJPEG() async throws {
        try Fixtures.write(Fixtures.quadrants(width: 640, height: 480), "heic-source.ppm")
        let png = try await Fixtures.convert("heic-source.ppm", to: "heic-source.png")
        let file = Fixtures.path("photo.heic")
        try await Fixtures.run(["heif-enc", "-q", "60", png, "-o", file])
        let image = try await Self.withProcessor { try await $0.process(file: file) }
        #expect(image.source == .heif)
        #expect(image.width == 640 && image.height == 480)
        try Self.expectNoMetadata(image.full)
        let decoded = try await DecodedImage(jpeg: image.full, name: "heic-out")
        #expect(Self.near(decoded.pixel(100, 100), (255, 0, 0)), "\(decoded.pixel(100, 100))")
        #expect(Self.near(decoded.pixel(540, 380), (255, 255, 255)), "\(decoded.pixel(540, 380))")
    }

    @Test(arguments: [("webp", ImageFormat.webp), ("png", .png), ("jpg", .jpeg)])
    func formatsComeBackAsJPEG(extension ext: String, format: ImageFormat) async throws {
        try Fixtures.write(Fixtures.quadrants(width: 320, height: 240), "format.ppm")
        let file = try await Fixtures.convert("format.ppm", to: "format." + ext)
        let image = try await Self.withProcessor { try await $0.process(file: file) }
        #expect(image.source == format)
        #expect(image.width == 320 && image.height == 240)
        try Self.expectNoMetadata(image.full)
        let decoded = try await DecodedImage(jpeg: image.full, name: "format-\(ext)-out")
        #expect(Self.near(decoded.pixel(80, 60), (255, 0, 0)), "\(decoded.pixel(80, 60))")
        #expect(Self.near(decoded.pixel(240, 60), (0, 255, 0)), "\(decoded.pixel(240, 60))")
    }

    @Test func anEmbeddedICCProfileIsAppliedThenStripped() async throws {
        try Fixtures.write(Fixtures.quadrants(width: 320, height: 240), "icc.ppm")
        let file = try await Fixtures.convert("icc.ppm", to: "icc.jpg", options: "[Q=95]")
        let profile = try Fixtures.write(SwappedPrimariesProfile.bytes(), "swapped.icc")
        try await Fixtures.run(["exiftool", "-q", "-overwrite_original", "-ICC_Profile<=" + profile, file])
        #expect(try await Fixtures.header("icc-profile-data", file).isEmpty == false)

        let image = try await Self.withProcessor { try await $0.process(file: file) }
        try Self.expectNoMetadata(image.full)
        let decoded = try await DecodedImage(jpeg: image.full, name: "icc-out")
        // Stored red means blue under this profile, and the other way round; green stays green.
        #expect(Self.near(decoded.pixel(80, 60), (0, 0, 255), tolerance: 50), "\(decoded.pixel(80, 60))")
        #expect(Self.near(decoded.pixel(80, 180), (255, 0, 0), tolerance: 50), "\(decoded.pixel(80, 180))")
        #expect(Self.near(decoded.pixel(240, 60), (0, 255, 0), tolerance: 50), "\(decoded.pixel(240, 60))")
    }

    @Test func greyAlphaSixteenBitPNGBecomesThreeBandJPEGOnWhite() async throws {
        try Fixtures.write(Fixtures.gradient(width: 200, height: 100), "grey.ppm")
        try await Fixtures.run(["vips", "colourspace", Fixtures.path("grey.ppm"), Fixtures.path("grey16.v"), "grey16"])
        // Alpha 0: fully transparent, so the picture must come out white.
        try await Fixtures.run(["vips", "bandjoin_const", Fixtures.path("grey16.v"), Fixtures.path("grey16a.png"), "0"])
        #expect(try await Fixtures.header("bands", Fixtures.path("grey16a.png")) == "2")
        let image = try await Self.withProcessor { try await $0.process(file: Fixtures.path("grey16a.png")) }
        let decoded = try await DecodedImage(jpeg: image.full, name: "grey-out")
        #expect(decoded.width == 200 && decoded.height == 100)
        #expect(Self.near(decoded.pixel(100, 50), (255, 255, 255), tolerance: 4), "\(decoded.pixel(100, 50))")
    }

    // MARK: Refusals

    @Test func decompressionBombIsRefusedFromItsHeader() async throws {
        let file = try await Fixtures.decompressionBomb()
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? .max < 1_000_000)
        try await Self.withProcessor { processor in
            // The header's size, refused before any pixel is decoded (its CPU and memory: bench/imaging, bench/README).
            _ = await #expect(throws: ImageError.tooManyPixels(width: 10000, height: 10000)) {
                try await processor.process(file: file)
            }
        }
    }

    @Test func aTruncatedBombIsStillRefusedForItsSizeNotItsData() async throws {
        // The header alone decides: cut the bomb after its header and a little IDAT.
        let bomb = try await Fixtures.read(Fixtures.decompressionBomb())
        let file = try Fixtures.write(Array(bomb.prefix(200)), "bomb-head.png")
        try await Self.expectError(.tooManyPixels(width: 10000, height: 10000), file)
    }

    @Test func thePixelLimitIsInclusive() async throws {
        try Fixtures.write(Fixtures.gradient(width: 40, height: 25), "limit.ppm")
        let exact = try await Fixtures.convert("limit.ppm", to: "limit.png")
        try Fixtures.write(Fixtures.gradient(width: 40, height: 26), "over.ppm")
        let over = try await Fixtures.convert("over.ppm", to: "over.png")
        try await Self.withProcessor(maxPixels: 1000) { processor in
            let image = try await processor.process(file: exact)
            #expect(image.width == 40 && image.height == 25)
            await #expect(throws: ImageError.tooManyPixels(width: 40, height: 26)) { try await processor.process(file: over) }
        }
    }

    @Test func aTruncatedJPEGIsUndecodable() async throws {
        let whole = try await Fixtures.read(Fixtures.twelveMegapixelJPEG())
        let file = try Fixtures.write(Array(whole.prefix(whole.count / 2)), "truncated.jpg")
        try await Self.withProcessor { processor in
            do {
                _ = try await processor.process(file: file)
                Issue.record("a truncated JPEG was accepted")
            } catch ImageError.undecodable {
            }
        }
    }

    @Test func garbageAfterAJPEGSignatureIsUndecodable() async throws {
        let file = try Fixtures.write([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 0x41, count: 500), "garbage.jpg")
        try await Self.withProcessor { processor in
            do {
                _ = try await processor.process(file: file)
                Issue.record("garbage was accepted")
            } catch ImageError.undecodable {
            }
        }
    }

    @Test func textNamedJPEGIsUnsupported() async throws {
        try await Self.expectError(.unsupported, Fixtures.write(Array("hello, this is not a picture\n".utf8), "text.jpg"))
    }

    @Test func emptyFileIsUnsupported() async throws {
        try await Self.expectError(.unsupported, Fixtures.write([], "empty.jpg"))
    }

    @Test func otherImageFormatsAreUnsupported() async throws {
        try Fixtures.write(Fixtures.gradient(width: 64, height: 48), "other.ppm")
        for ext in ["gif", "tif", "v", "ppm"] {
            let file = ext == "ppm" ? Fixtures.path("other.ppm") : try await Fixtures.convert("other.ppm", to: "other." + ext)
            try await Self.expectError(.unsupported, file)
        }
    }

    // MARK: Bounds

    @Test func aBurstBeyondTheQueueGetsBusyAndTheRestSucceed() async throws {
        let file = try await Fixtures.twelveMegapixelJPEG()
        let outcomes = try await Self.withProcessor(threads: 2, maxQueued: 4) { processor in
            await withTaskGroup(of: String.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        do {
                            let image = try await processor.process(file: file)
                            return image.width == 2048 ? "ok" : "wrong size"
                        } catch ImageError.busy {
                            return "busy"
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                var outcomes: [String: Int] = [:]
                for await outcome in group { outcomes[outcome, default: 0] += 1 }
                return outcomes
            }
        }
        #expect(outcomes["busy", default: 0] >= 1, "\(outcomes)")
        #expect(outcomes["ok", default: 0] >= 6, "\(outcomes)")
        #expect(outcomes["busy", default: 0] + outcomes["ok", default: 0] == 16, "\(outcomes)")
    }

    @Test func oneThreadWithNoQueueServesOneCallerAfterAnother() async throws {
        // The slot is free again by the time a caller has its result.
        let file = try await Self.tinyPNG()
        try await Self.withProcessor(threads: 1, maxQueued: 0) { processor in
            for _ in 0..<20 {
                let image = try await processor.process(file: file)
                #expect(image.width == 8)
            }
        }
    }

    @Test func anImageOverItsTimeLimitTimesOutAndLibvipsStops() async throws {
        // 36 MP of PNG: under the pixel limit, and most of a second of decoding on this machine.
        let file = try await Fixtures.flatPNG36Megapixels()
        // How long the whole job keeps a thread (shutdown waits for it).
        func threadBusy(limit: Duration) async -> (Duration, Result<ProcessedImage, any Error>) {
            let processor = ImageProcessor(threads: 1, maxQueued: 0, timeLimit: limit)
            let start = ContinuousClock.now
            let outcome = await Result(catching: { try await processor.process(file: file) })
            await processor.shutdown()
            return (ContinuousClock.now - start, outcome)
        }
        let (whole, unlimited) = await threadBusy(limit: .seconds(60))
        #expect(throws: Never.self) { try unlimited.get() }
        let (limited, outcome) = await threadBusy(limit: .milliseconds(40))
        #expect(throws: ImageError.timedOut) { try outcome.get() }
        // libvips was told to stop at its next strip: the thread is free soon after the limit, long before
        // the whole decode would have ended.
        #expect(limited * 3 < whole, "thread busy \(limited) with the limit, \(whole) without")
    }

    @Test func theThreadIsBackAfterATimeOut() async throws {
        let file = try await Fixtures.twelveMegapixelJPEG()
        let tiny = try await Self.tinyPNG()
        try await Self.withProcessor(threads: 1, maxQueued: 1, timeLimit: .milliseconds(5)) { processor in
            await #expect(throws: ImageError.timedOut) { try await processor.process(file: file) }
            // The timed-out image's thread still holds its slot; the next image takes the queue's and runs once that
            // thread is done: no polling for the slot.
            // Returns whether the image timed out: a 5 ms budget on a shared machine, not a leak; its thread then holds
            // the slot until libvips stops, as the first image's did.
            func expectProcessed(_ outcome: Result<ProcessedImage, any Error>) -> Bool {
                switch outcome {
                case .success(let image): #expect(image.width == 8); return false
                case .failure(ImageError.timedOut): return true
                case .failure(let error): Issue.record("\(error)"); return false
                }
            }
            // Both slots were given back: two images at once are both admitted, unless the image before them timed out
            // too and its thread still holds one (then the pair says nothing about the first image's slot).
            guard !expectProcessed(await Result(catching: { try await processor.process(file: tiny) })) else { return }
            // The thread of the image just processed may not have marked itself free when its answer arrives: one of the
            // pair may find the pool full (`busy`), never both.
            async let first = Result(catching: { try await processor.process(file: tiny) })
            async let second = Result(catching: { try await processor.process(file: tiny) })
            let pair = [await first, await second]
            let busy = pair.filter { if case .failure(ImageError.busy) = $0 { true } else { false } }.count
            #expect(busy <= 1, "both of two images refused: a slot was not given back")
            for outcome in pair { if case .failure(ImageError.busy) = outcome { continue }; _ = expectProcessed(outcome) }
        }
    }

    /// Made once per test process.
    static func tinyPNG() async throws -> String { try await tiny.value }
    private static let tiny = Task {
        try Fixtures.write(Fixtures.gradient(width: 8, height: 6), "tiny.ppm")
        return try await Fixtures.convert("tiny.ppm", to: "tiny.png")
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
