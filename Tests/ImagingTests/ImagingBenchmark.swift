import Foundation
import Imaging
import Testing

/// Not a test: `IMAGING_BENCH=DIR swift test --skip-build --filter ImagingBenchmark` processes every file in DIR
/// five times, one at a time, and prints the median wall time and the process's peak RSS, to compare with
/// `vips thumbnail FILE out.jpg 2048` on the command line.
@Suite struct ImagingBenchmark {
    static let directory = ProcessInfo.processInfo.environment["IMAGING_BENCH"]

    @Test(.enabled(if: directory != nil)) func processEachFile() async throws {
        let directory = try #require(Self.directory)
        print("bench peak RSS before any image: \(try ProcessCounters.peakResidentBytes() >> 20) MiB")
        let processor = ImageProcessor(threads: 1, maxQueued: 0, timeLimit: .seconds(60))
        for name in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() {
            let file = directory + "/" + name
            var times: [Duration] = []
            var outcome = ""
            for _ in 0..<5 {
                let start = ContinuousClock.now
                do {
                    let image = try await processor.process(file: file)
                    outcome = "\(image.width)×\(image.height), \(image.full.count >> 10) KiB"
                } catch {
                    outcome = "\(error)"
                    print("bench \(name): \(error)")
                }
                times.append(ContinuousClock.now - start)
            }
            let median = times.sorted()[times.count / 2]
            let peak = try ProcessCounters.peakResidentBytes() >> 20
            print("bench \(name): median \(median) (\(outcome)); peak RSS so far \(peak) MiB")
        }
        await processor.shutdown()

        // How long a thread goes on after its caller got `timedOut` (100 ms limit): shutdown waits for it.
        for name in try FileManager.default.contentsOfDirectory(atPath: directory).sorted() {
            let limited = ImageProcessor(threads: 1, maxQueued: 0, timeLimit: .milliseconds(100))
            let start = ContinuousClock.now
            let outcome = await Result(catching: { try await limited.process(file: directory + "/" + name) })
            let answered = ContinuousClock.now - start
            await limited.shutdown()
            print("bench \(name) with a 100 ms limit: \(outcome.map { "\($0.width)" }) after \(answered), thread free after \(ContinuousClock.now - start)")
        }

        // The BlurHash of a full-size preview (640 × 480), in this build's optimisation.
        let pixels = [UInt8](repeating: 128, count: 640 * 480 * 3)
        let start = ContinuousClock.now
        _ = BlurHash.encode(rgb: pixels, width: 640, height: 480)
        print("bench BlurHash 640×480: \(ContinuousClock.now - start)")
    }
}
