import CCurl
import Foundation
import Synchronization

/// HTTP/2 multiplexing over libcurl's multi interface: many transfers at once as streams of one connection per host
/// (APNs: one per environment), all driven by one dedicated thread of its own, never Swift's cooperative pool.
///
/// - The thread owns the `CURLM` and every easy handle while it is in a transfer. It loops on `curl_multi_poll`
///   (woken by `curl_multi_wakeup` when a request is submitted or cancelled), `curl_multi_perform` and
///   `curl_multi_info_read`.
/// - One connection per host (`CURLMOPT_MAX_HOST_CONNECTIONS` 1), HTTP/2 over TLS (ALPN), and each transfer waits
///   for that connection and multiplexes on it instead of opening another (`CURLOPT_PIPEWAIT`).
/// - Bound: at most `maxConcurrentTransfers` transfers are in libcurl at once; the excess waits in the multiplexer's
///   queue (not as threads), in order, and enters as transfers finish. The queue itself is unbounded: the caller
///   (the push worker) bounds what it claims.
/// - A request's total timeout starts when it enters libcurl; its connect timeout bounds a new connection.
/// - A cancelled task's transfer leaves libcurl on the thread and `send` throws `CancellationError`.
/// - Trust: the system's CA bundle, plus an optional extra CA file (a test server's), both passed as one PEM in
///   memory (`CURLOPT_CAINFO_BLOB`): libcurl takes one CA bundle. An unreadable extra file fails every transfer with
///   `CurlError` 77 (`CURLE_SSL_CACERT_BADFILE`) rather than silently trusting less.
public final class CurlMultiplexer: Sendable {
    /// The most transfers in libcurl at once.
    public let maxConcurrentTransfers: Int
    private let inbox: Mutex<Inbox>
    private let multi: MultiHandle
    /// Callers of `shutdown` waiting for the thread to end.
    private let stopped = Mutex<[CheckedContinuation<Void, Never>]>([])
    private let threadEnded = Atomic<Bool>(false)
    let counters = Counters()

    struct Inbox {
        var submitted: [CurlTransfer] = []
        var cancelled: [CurlTransfer] = []
        var stopping = false
    }

    final class Counters: Sendable {
        let connectionsOpened = Atomic<Int>(0)
        let inFlight = Atomic<Int>(0)
        let queued = Atomic<Int>(0)
    }

    /// Starts the thread. `extraCAFile`: a PEM file trusted in addition to the system's bundle.
    public init(maxConcurrentTransfers: Int = 1000, extraCAFile: String? = nil) {
        CurlMultiplexer.globalInit
        self.maxConcurrentTransfers = max(1, maxConcurrentTransfers)
        self.inbox = Mutex(Inbox())
        guard let pointer = curl_multi_init() else { preconditionFailure("curl_multi_init failed (out of memory)") }
        self.multi = MultiHandle(pointer)
        _ = wb_curl_multi_setopt_long(pointer, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = wb_curl_multi_setopt_long(pointer, CURLMOPT_MAX_HOST_CONNECTIONS, 1)
        _ = wb_curl_multi_setopt_long(pointer, CURLMOPT_MAX_CONCURRENT_STREAMS, self.maxConcurrentTransfers)
        let loop = Loop(multiplexer: self, extraCAFile: extraCAFile)
        let thread = Thread { loop.run() }
        thread.name = "curl-multiplexer"
        thread.start()
    }

    private static let globalInit: Void = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()

    /// Sends `request` as one transfer (one HTTP/2 stream when the server speaks HTTP/2). Throws `CurlError` for a
    /// transport failure (see `CurlError.isTransient`), `CancellationError` when the task is cancelled.
    public func send(_ request: CurlRequest) async throws -> CurlResponse {
        let transfer = CurlTransfer(request)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard transfer.attach(continuation) else { return }  // cancelled already: resumed by `attach`
                let accepted = inbox.withLock { inbox -> Bool in
                    guard !inbox.stopping else { return false }
                    counters.queued.add(1, ordering: .relaxed)
                    inbox.submitted.append(transfer)
                    curl_multi_wakeup(multi.pointer)
                    return true
                }
                if !accepted { transfer.finish(.failure(CurlError(code: -1, message: "the multiplexer is shut down"))) }
            }
        } onCancel: {
            transfer.markCancelled()
            inbox.withLock { inbox in
                guard !inbox.stopping else { return }
                inbox.cancelled.append(transfer)
                curl_multi_wakeup(multi.pointer)
            }
        }
    }

    /// Connections libcurl opened so far (the sum of `CURLINFO_NUM_CONNECTS` over finished transfers).
    public var connectionsOpened: Int { counters.connectionsOpened.load(ordering: .relaxed) }
    /// Transfers in libcurl now.
    public var transfersInFlight: Int { counters.inFlight.load(ordering: .relaxed) }
    /// Transfers waiting for a place among the `maxConcurrentTransfers`.
    public var transfersQueued: Int { counters.queued.load(ordering: .relaxed) }

    /// Fails what is queued or in flight (`CurlError` -1), closes the connections and ends the thread. Later sends fail.
    public func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = stopped.withLock { stored -> Bool in
                if threadEnded.load(ordering: .acquiring) { return true }
                stored.append(continuation)
                return false
            }
            if ended {
                continuation.resume()
                return
            }
            inbox.withLock { inbox in
                guard !inbox.stopping else { return }
                inbox.stopping = true
                curl_multi_wakeup(multi.pointer)
            }
        }
    }

    /// Called by the thread: what arrived since the last look.
    func takeInbox() -> Inbox {
        inbox.withLock { inbox in
            let taken = inbox
            inbox.submitted.removeAll()
            inbox.cancelled.removeAll()
            return taken
        }
    }

    /// Called by the thread as its last act.
    func threadDidEnd() {
        let waiting = stopped.withLock { stored -> [CheckedContinuation<Void, Never>] in
            threadEnded.store(true, ordering: .releasing)
            defer { stored.removeAll() }
            return stored
        }
        for continuation in waiting { continuation.resume() }
    }

    var multiPointer: UnsafeMutableRawPointer { multi.pointer }
}

/// The multi handle. `curl_multi_wakeup` is the one call made from other threads (libcurl allows it), always inside
/// the inbox's lock and only before `stopping` is set; every other use is on the multiplexer's thread, which cleans it
/// up as it ends, after it saw `stopping`.
final class MultiHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer

    init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }
}
