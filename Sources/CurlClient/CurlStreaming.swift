import CCurl
import Foundation
import NIOPosix

/// A response read as it arrives (an event stream): its status and headers, then its body a chunk at a time.
public struct CurlStreamingResponse: Sendable {
    public var status: Int
    /// Header names are lower-cased.
    public var headers: [(String, String)]
    /// The body as curl receives it. Dropping every copy of it (and of its iterators) ends the transfer.
    public var body: CurlResponseBody

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.0 == lower }?.1
    }
}

/// A streaming response's body: chunks of bytes as curl's write callback gets them, then the end (`nil`), or the
/// transfer's error (a `CurlError`, or `CancellationError` once cancelled). Iterate it from one task at a time.
public struct CurlResponseBody: AsyncSequence, Sendable {
    public typealias Element = [UInt8]
    public typealias Failure = any Error

    let owner: TransferOwner

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(owner: owner) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        public typealias Element = [UInt8]
        public typealias Failure = any Error

        let owner: TransferOwner

        /// The next chunk, or nil at the body's end. Cancelling the waiting task cancels the transfer.
        public mutating func next() async throws -> [UInt8]? {
            let transfer = owner.transfer
            return try await withTaskCancellationHandler {
                try await transfer.nextChunk()
            } onCancel: {
                transfer.cancel()
            }
        }
    }

    /// Ends the transfer: the connection is closed (within about a second: curl checks between its reads), and a
    /// waiting or later `next()` throws `CancellationError`.
    public func cancel() { owner.transfer.cancel() }

    /// The rest of the body (an error reply's JSON); more than `maxBytes` cancels the transfer and throws `tooLarge`.
    public func collect(upTo maxBytes: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in self {
            guard bytes.count <= maxBytes - chunk.count else {
                cancel()
                throw CurlError(code: CurlError.tooLargeCode, message: "response larger than \(maxBytes) bytes")
            }
            bytes += chunk
        }
        return bytes
    }
}

extension CurlHTTPClient {
    /// Sends `request` and returns as soon as the response's status and headers have arrived; its body then arrives
    /// through `body` as the server sends it, for as long as the server sends it.
    ///
    /// The transfer runs on one of the client's own threads (not Swift's cooperative pool) and keeps it until the
    /// body ends or is cancelled, so a client that streams needs a thread more than the transfers it runs beside.
    /// There is no total timeout (`timeoutMilliseconds` is not used) and no low-speed limit: a stream may stay quiet
    /// for as long as its server likes. The connect timeout holds, and TCP keepalive probes find a peer that vanished.
    /// The body is not compressed (no `Accept-Encoding`), so every chunk is what the server sent, when it sent it.
    /// At most `maxBufferedBytes` received and not yet read wait in memory: past it curl stops reading the socket
    /// until the reader catches up.
    ///
    /// Cancelling the calling task (while it waits for the head, or while it waits on `body`) ends the transfer.
    /// Throws `CurlError` when there is no response (cannot connect, connection lost before the head).
    public func stream(_ request: CurlRequest, maxBufferedBytes: Int = 1 << 20) async throws -> CurlStreamingResponse {
        let transfer = StreamTransfer(maxBufferedBytes: maxBufferedBytes)
        let owner = TransferOwner(transfer)
        threadPool.submit { state in
            guard case .active = state else {
                transfer.finish(CurlError(code: -1, message: "the HTTP client is shut down"))
                return
            }
            do {
                let handle = try self.checkOut()
                defer { self.checkIn(handle) }
                try Self.performStream(request, on: handle, into: transfer)
                transfer.finish(nil)
            } catch {
                transfer.finish(error)
            }
        }
        let head = try await withTaskCancellationHandler {
            try await transfer.head()
        } onCancel: {
            transfer.cancel()
        }
        return CurlStreamingResponse(status: head.status, headers: head.headers, body: CurlResponseBody(owner: owner))
    }

    /// Performs one streaming transfer synchronously on `easy` (new or reset), handing its head and body to `transfer`.
    private static func performStream(_ request: CurlRequest, on easy: EasyHandle, into transfer: StreamTransfer) throws {
        let handle = easy.pointer
        let sink = StreamSink(transfer)
        let sinkPointer = Unmanaged.passUnretained(sink).toOpaque()
        let headerList = try setRequestOptions(request, on: handle)
        defer { curl_slist_free_all(headerList) }
        // No total timeout and no low-speed limit (both curl's defaults, set anyway since the handle may be reused).
        try check(wb_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, 0))
        try check(wb_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 0))
        try check(wb_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, 0))
        // A quiet stream is normal; a peer that is gone is found by the kernel's probes instead (Linux: after about
        // 30 s + 9 × 10 s).
        try check(wb_curl_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1))
        try check(wb_curl_setopt_long(handle, CURLOPT_TCP_KEEPIDLE, 30))
        try check(wb_curl_setopt_long(handle, CURLOPT_TCP_KEEPINTVL, 10))
        // Through a proxy, the proxy's own "200 Connection established" is not the response's head.
        try check(wb_curl_setopt_long(handle, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1))

        try check(wb_curl_setopt_write_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, user in
            let sink = Unmanaged<StreamSink>.fromOpaque(user!).takeUnretainedValue()
            let length = size * count
            if let data, length > 0 {
                sink.headerBytes += length
                guard sink.headerBytes <= CurlHTTPClient.maxHeaderBytes else {
                    sink.headersTooLarge = true
                    return 0
                }
                sink.headerLine(String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self))
            }
            return length
        })
        try check(wb_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, sinkPointer))
        try check(wb_curl_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, user in
            let sink = Unmanaged<StreamSink>.fromOpaque(user!).takeUnretainedValue()
            let length = size * count
            guard let data, length > 0 else { return length }
            sink.deliverHead()  // the body has begun: whatever head came is the final one
            // Blocks while the reader is `maxBufferedBytes` behind; false once cancelled: 0 abandons the transfer.
            guard sink.transfer.produce(Array(UnsafeRawBufferPointer(start: data, count: length))) else { return 0 }
            return length
        })
        try check(wb_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, sinkPointer))
        // Called about once a second while the stream is quiet, and between reads: how a cancelled transfer ends when
        // no byte comes to the write callback.
        try check(wb_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0))
        try check(wb_curl_setopt_xferinfo_callback(handle) { user, _, _, _, _ in
            let sink = Unmanaged<StreamSink>.fromOpaque(user!).takeUnretainedValue()
            return sink.transfer.isCancelled ? 1 : 0  // non-zero: CURLE_ABORTED_BY_CALLBACK
        })
        try check(wb_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, sinkPointer))

        let code = performTransfer(request, on: handle)
        if sink.transfer.isCancelled { throw CancellationError() }
        if sink.headersTooLarge {
            throw CurlError(code: CurlError.tooLargeCode, message: "response headers larger than \(CurlHTTPClient.maxHeaderBytes) bytes")
        }
        try check(code)
        if !sink.headDelivered {  // a response without a body
            var status = 0
            _ = wb_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            if sink.status == 0 { sink.status = status }
            sink.deliverHead()
        }
    }
}

/// Keeps a stream's transfer alive while its reader holds the body; once the last copy is gone, the transfer ends.
final class TransferOwner: Sendable {
    let transfer: StreamTransfer

    init(_ transfer: StreamTransfer) { self.transfer = transfer }

    deinit { transfer.cancel() }
}

/// The head being read from curl's header callback; used only by the thread running the transfer.
private final class StreamSink {
    let transfer: StreamTransfer
    var status = 0
    var headers: [(String, String)] = []
    var headerBytes = 0
    var headersTooLarge = false
    var headDelivered = false

    init(_ transfer: StreamTransfer) { self.transfer = transfer }

    /// One header line of curl's: a status line starts a response (a 1xx or a redirect may come before the final
    /// one); the blank line ends the head, delivered at once for a final status, before any body byte.
    func headerLine(_ line: String) {
        guard !headDelivered else { return }  // trailers
        if line.hasPrefix("HTTP/") {
            let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            status = fields.count > 1 ? Int(fields[1]) ?? 0 : 0
            headers.removeAll()
            return
        }
        if line == "\r\n" || line == "\n" {
            if status >= 200 { deliverHead() }
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        headers.append((name, value))
    }

    func deliverHead() {
        guard !headDelivered else { return }
        headDelivered = true
        transfer.deliverHead(StreamTransfer.Head(status: status, headers: headers))
    }
}

/// What one streaming transfer shares between curl's thread (the producer) and the reading task: the head, the
/// chunks received and not yet read, the end, and cancellation. Everything behind `condition`, which also lets the
/// producer wait while the reader is `maxBufferedBytes` behind.
final class StreamTransfer: @unchecked Sendable {
    struct Head: Sendable {
        var status: Int
        var headers: [(String, String)]
    }

    private enum End {
        case finished
        case failed(any Error)
    }

    private let condition = NSCondition()
    private let maxBufferedBytes: Int
    // Guarded by `condition`:
    private var receivedHead: Head?
    private var headWaiter: CheckedContinuation<Head, any Error>?
    private var chunks: [[UInt8]] = []
    private var bufferedBytes = 0
    private var chunkWaiter: CheckedContinuation<[UInt8]?, any Error>?
    private var end: End?
    private var cancelled = false

    init(maxBufferedBytes: Int) { self.maxBufferedBytes = max(1, maxBufferedBytes) }

    var isCancelled: Bool { condition.withLock { cancelled } }

    // MARK: curl's thread

    func deliverHead(_ head: Head) {
        let waiter: CheckedContinuation<Head, any Error>? = condition.withLock {
            guard receivedHead == nil else { return nil }
            receivedHead = head
            defer { headWaiter = nil }
            return headWaiter
        }
        waiter?.resume(returning: head)
    }

    /// Hands a chunk to the reader, first waiting while `maxBufferedBytes` are unread; false once cancelled.
    func produce(_ chunk: [UInt8]) -> Bool {
        condition.lock()
        while !cancelled && bufferedBytes >= maxBufferedBytes { condition.wait() }
        if cancelled {
            condition.unlock()
            return false
        }
        if let waiter = chunkWaiter {
            chunkWaiter = nil
            condition.unlock()
            waiter.resume(returning: chunk)
        } else {
            chunks.append(chunk)
            bufferedBytes += chunk.count
            condition.unlock()
        }
        return true
    }

    /// The transfer is over: nil for a complete body, else why it stopped.
    func finish(_ error: (any Error)?) {
        let (headWaiter, chunkWaiter): (CheckedContinuation<Head, any Error>?, CheckedContinuation<[UInt8]?, any Error>?) =
            condition.withLock {
                guard end == nil else { return (nil, nil) }
                end = error.map { .failed($0) } ?? .finished
                defer {
                    self.headWaiter = nil
                    self.chunkWaiter = nil
                }
                return (self.headWaiter, self.chunkWaiter)
            }
        let failure = error ?? CurlError(code: -1, message: "the transfer ended without a response")
        headWaiter?.resume(throwing: failure)
        if let error { chunkWaiter?.resume(throwing: error) } else { chunkWaiter?.resume(returning: nil) }
    }

    // MARK: The reader

    func head() async throws -> Head {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Head, any Error>) in
            let ready: Result<Head, any Error>? = condition.withLock {
                if cancelled { return .failure(CancellationError()) }
                if let receivedHead { return .success(receivedHead) }
                switch end {
                case .failed(let error): return .failure(error)
                case .finished: return .failure(CurlError(code: -1, message: "the transfer ended without a response"))
                case nil:
                    headWaiter = continuation
                    return nil
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    func nextChunk() async throws -> [UInt8]? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8]?, any Error>) in
            let ready: Result<[UInt8]?, any Error>? = condition.withLock {
                if cancelled { return .failure(CancellationError()) }
                if !chunks.isEmpty {
                    let chunk = chunks.removeFirst()
                    bufferedBytes -= chunk.count
                    condition.signal()  // the producer may be waiting for room
                    return .success(chunk)
                }
                switch end {
                case .failed(let error): return .failure(error)
                case .finished: return .success(nil)
                case nil:
                    chunkWaiter = continuation
                    return nil
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// Stops the transfer: the producer stops waiting and curl abandons the transfer at its next callback; a waiting
    /// reader gets `CancellationError` at once.
    func cancel() {
        let (headWaiter, chunkWaiter): (CheckedContinuation<Head, any Error>?, CheckedContinuation<[UInt8]?, any Error>?) =
            condition.withLock {
                guard !cancelled else { return (nil, nil) }
                cancelled = true
                chunks.removeAll()
                bufferedBytes = 0
                condition.broadcast()
                defer {
                    self.headWaiter = nil
                    self.chunkWaiter = nil
                }
                return (self.headWaiter, self.chunkWaiter)
            }
        headWaiter?.resume(throwing: CancellationError())
        chunkWaiter?.resume(throwing: CancellationError())
    }
}
