import CurlClient
import NIOPosix

/// The threads media I/O blocks: S3 transfers (libcurl) and local file calls. Its own pool, apart from
/// `NIOThreadPool.singleton`, where NIO's `FileSystem.shared` writes upload temp files: a bucket that stalls
/// holds these threads only, never the uploads' file work nor anything else on the shared pool.
///
/// Started when made; ``shutdown()`` once nothing uses the stores any more (the server does it after draining).
public final class MediaIO: Sendable {
    /// Media operations running at once per process. Past it an operation waits in the pool's queue for a
    /// thread: what feeds the queue is itself bounded (uploads by the image processor's threads and queue, the
    /// sync and the purger one media at a time), and every S3 request by its timeouts.
    public static let threadCount = 4

    public let threadPool: NIOThreadPool
    /// S3 requests, on `threadPool`, keeping one idle connection per thread.
    public let httpClient: CurlHTTPClient

    public init(threads: Int = MediaIO.threadCount) {
        threadPool = NIOThreadPool(numberOfThreads: threads)
        threadPool.start()
        httpClient = CurlHTTPClient(threadPool: threadPool, maxIdleHandles: threads)
    }

    /// Closes the S3 connections and ends the threads, after the work already queued.
    public func shutdown() async {
        await httpClient.shutdown()
        try? await threadPool.shutdownGracefully()
    }
}
