import Foundation
import Imaging

// `bench/imaging/run DIR` (release build): processes every file in DIR five times, one at a time, with the
// server's `ImageProcessor`, and prints the median wall time and the process's peak RSS, to compare with
// `vips thumbnail FILE out.jpg 2048` on the command line. Then, per file, how long a thread goes on after its
// caller got `timedOut` (a 100 ms limit), and the BlurHash of a full-size preview.

/// VmHWM from /proc/self/status: the peak resident set size so far, in MiB (0 where there is no /proc).
func peakResidentMiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return kilobytes >> 10
}

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: imaging-bench DIR\n".utf8))
    exit(2)
}
let directory = CommandLine.arguments[1]
let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
print("peak RSS before any image: \(peakResidentMiB()) MiB")

let processor = ImageProcessor(threads: 1, maxQueued: 0, timeLimit: .seconds(60))
for name in names {
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
        }
        times.append(ContinuousClock.now - start)
    }
    print("\(name): median \(times.sorted()[times.count / 2]) (\(outcome)); peak RSS so far \(peakResidentMiB()) MiB")
}
await processor.shutdown()

// How long a thread goes on after its caller got `timedOut` (100 ms limit): shutdown waits for it.
for name in names {
    let limited = ImageProcessor(threads: 1, maxQueued: 0, timeLimit: .milliseconds(100))
    let start = ContinuousClock.now
    let outcome: String
    do {
        outcome = "\(try await limited.process(file: directory + "/" + name).width) px wide"
    } catch {
        outcome = "\(error)"
    }
    let answered = ContinuousClock.now - start
    await limited.shutdown()
    print("\(name) with a 100 ms limit: \(outcome) after \(answered), thread free after \(ContinuousClock.now - start)")
}

// The BlurHash of a full-size preview (640 × 480).
let pixels = [UInt8](repeating: 128, count: 640 * 480 * 3)
let start = ContinuousClock.now
_ = BlurHash.encode(rgb: pixels, width: 640, height: 480)
print("BlurHash 640×480: \(ContinuousClock.now - start)")
