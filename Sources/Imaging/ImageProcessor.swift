import CVips
import NIOPosix
import Synchronization

/// Decodes and re-encodes uploads (CONTRACT §8) with libvips, on its own thread pool, never on Swift's
/// cooperative pool.
///
/// Bounds:
/// - **Concurrency**: `threads` images decode at once; at most `maxQueued` more wait. Past that, `process`
///   throws `busy` at once. A slot is given back when its thread is done with the image (just before the
///   result is delivered), not when a timed-out caller stopped waiting, so the bounds below hold even for
///   images that overran their time.
/// - **Time**: each image gets `timeLimit` from when a thread picks it up. At the limit its caller gets
///   `timedOut`, and libvips is told to stop at its next strip or tile (the `eval` signal sets the image's
///   kill flag): measured, a JPEG or PNG thread is free 2–4 ms after the limit. What cannot be interrupted
///   is one call into a codec: libheif decodes a whole HEIC frame in one call, so a HEIC thread overruns
///   the limit by up to one full decode (measured 0.6 s for 12 MP, 1.7 s for 39 MP on this 2-core machine).
/// - **Memory**: no libvips operation cache; sequential decoding; JPEG and PNG decode strip by strip, WebP
///   and HEIC a whole frame; the upright image (≤ `maxSide`² × 3 bytes, 12 MiB at 2048) and the preview are
///   kept in memory. Measured peak per image: 12 MP JPEG ≈ 60 MiB, 36 MP PNG ≈ 100 MiB, 39 MP HEIC
///   ≈ 340 MiB. The worst case per image (a HEIC of `maxPixels`: libheif's planes, its RGB frame and libvips'
///   copy, about 9 bytes a pixel, plus the upright image and the preview twice each and codec state: ≈ 385 MiB
///   at 40 MP) covers these; `threads` × that bounds the whole. Waiting images hold only their file.
public final class ImageProcessor: Sendable {
    private let pool: NIOThreadPool
    private let limits: VipsPipeline.Limits
    private let timeLimit: Duration
    private let timeLimitMicroseconds: Int
    private let capacity: Int
    private let admitted = Mutex(0)
    public let threads: Int

    /// Out-of-range arguments are clamped: threads 1...256, sides 1...65535.
    ///
    /// - Parameters:
    ///   - threads: decoding threads (each runs one image with one libvips worker).
    ///   - maxQueued: images that may wait for a thread; more are refused with `busy`.
    ///   - timeLimit: per image, from when a thread starts on it.
    ///   - maxPixels: larger images are refused from their header (`tooManyPixels`).
    ///   - maxSide: the saved image's long side is at most this (never enlarged).
    ///   - previewSide: the preview's long side is at most this.
    ///   - quality: JPEG quality of both.
    public init(
        threads: Int,
        maxQueued: Int,
        timeLimit: Duration,
        maxPixels: Int = 40_000_000,
        maxSide: Int = 2048,
        previewSide: Int = 640,
        quality: Int = 85
    ) {
        self.threads = min(256, max(1, threads))
        self.capacity = self.threads + min(1 << 20, max(0, maxQueued))
        self.timeLimit = timeLimit
        self.timeLimitMicroseconds = Self.microseconds(timeLimit)
        self.limits = VipsPipeline.Limits(
            maxPixels: min(1 << 40, max(1, maxPixels)),
            maxSide: min(65535, max(1, maxSide)),
            previewSide: min(65535, max(1, previewSide)),
            quality: min(100, max(1, quality))
        )
        self.pool = NIOThreadPool(numberOfThreads: self.threads)
        self.pool.start()
    }

    /// Processes the file at `path` (an upload already on disk). Throws `ImageError`, or `CancellationError`
    /// if the calling task is cancelled (the thread still finishes or times out the image).
    public func process(file path: String) async throws -> ProcessedImage {
        guard admit() else { throw ImageError.busy }
        let pending = PendingResult<ProcessedImage>()
        let limits = self.limits
        let timeLimit = self.timeLimit
        let timeLimitMicroseconds = self.timeLimitMicroseconds
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                pending.wait(continuation)
                pool.submit { state in
                    // The slot is given back before the result is delivered, so a caller that goes on to the
                    // next image finds it free.
                    guard case .active = state else {
                        self.release()
                        pending.finish(.failure(ImageError.busy))
                        return
                    }
                    let (deadline, overflow) = wb_vips_monotonic_now().addingReportingOverflow(timeLimitMicroseconds)
                    let timer = Task {
                        do { try await Task.sleep(for: timeLimit) } catch { return }
                        pending.finish(.failure(ImageError.timedOut))
                    }
                    let result = Result { () throws(ImageError) -> ProcessedImage in
                        try VipsPipeline.process(path: path, limits: limits, deadline: overflow ? .max : deadline)
                    }
                    timer.cancel()
                    self.release()
                    pending.finish(result.mapError { $0 })
                }
            }
        } onCancel: {
            pending.finish(.failure(CancellationError()))
        }
    }

    /// Stops the threads after the images they are on; queued images get `busy`.
    public func shutdown() async {
        try? await pool.shutdownGracefully()
    }

    private func admit() -> Bool {
        admitted.withLock { count in
            guard count < capacity else { return false }
            count += 1
            return true
        }
    }

    private func release() {
        admitted.withLock { $0 -= 1 }
    }

    private static func microseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard let seconds = Int(exactly: seconds) else { return seconds < 0 ? 0 : .max }
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return .max }
        let (total, overflow2) = whole.addingReportingOverflow(Int(attoseconds / 1_000_000_000_000))
        return overflow2 ? .max : total
    }
}
