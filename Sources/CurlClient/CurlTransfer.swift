import CCurl
import Synchronization

/// One request in a `CurlMultiplexer`: the caller's continuation, and what libcurl needs while the transfer runs (its
/// easy handle, header list and response sink). The continuation is resumed exactly once (`finish`, under its lock);
/// the easy handle, header list and sink are touched only by the multiplexer's thread.
final class CurlTransfer: @unchecked Sendable {
    let request: CurlRequest
    private let state = Mutex<State>(State())
    /// Thread-only from here on.
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    let sink: CurlTransferSink

    struct State {
        var continuation: CheckedContinuation<CurlResponse, any Error>?
        var cancelled = false
        var finished = false
    }

    init(_ request: CurlRequest) {
        self.request = request
        self.sink = CurlTransferSink(maxBodyBytes: request.maxResponseBytes, truncates: request.truncatesResponseBody)
    }

    /// Keeps the caller's continuation; false (and the continuation resumed with `CancellationError`) when the task
    /// was cancelled before it got here.
    func attach(_ continuation: CheckedContinuation<CurlResponse, any Error>) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            if state.cancelled {
                state.finished = true
                return true
            }
            state.continuation = continuation
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    func markCancelled() { state.withLock { $0.cancelled = true } }

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Resumes the caller, once; later calls do nothing.
    func finish(_ result: Result<CurlResponse, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<CurlResponse, any Error>? in
            guard !state.finished else { return nil }
            state.finished = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: result)
    }

    /// Frees the easy handle and header list (thread only, after the handle left the multi handle).
    func release() {
        if let easy { curl_easy_cleanup(easy) }
        easy = nil
        curl_slist_free_all(headerList)
        headerList = nil
    }
}

/// Collects one transfer's status line, headers and body, within bounds: used only on the multiplexer's thread.
final class CurlTransferSink {
    var body: [UInt8] = []
    let maxBodyBytes: Int
    /// Past `maxBodyBytes`: drop the rest (true) or stop the transfer (false).
    let truncates: Bool
    var headerBytes = 0
    var tooLarge = false
    var headers: [(String, String)] = []

    init(maxBodyBytes: Int, truncates: Bool) {
        self.maxBodyBytes = maxBodyBytes
        self.truncates = truncates
    }

    /// Takes `length` body bytes; returns what libcurl's write callback must answer (`length`, or 0 to stop).
    func take(_ data: UnsafeRawBufferPointer) -> Int {
        let room = maxBodyBytes - body.count
        if data.count <= room {
            body.append(contentsOf: data)
            return data.count
        }
        guard truncates else {
            tooLarge = true
            return 0
        }
        if room > 0 { body.append(contentsOf: data.prefix(room)) }
        return data.count
    }

    func addHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        headerBytes += bytes.count
        guard headerBytes <= CurlHTTPClient.maxHeaderBytes else {
            tooLarge = true
            return false
        }
        let line = String(decoding: bytes, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            headers.removeAll()  // a new response (after 100 Continue)
            return true
        }
        guard let colon = line.firstIndex(of: ":") else { return true }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        headers.append((name, value))
        return true
    }
}
