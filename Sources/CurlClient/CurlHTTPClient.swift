import CCurl
import Foundation
import NIOPosix
import Synchronization

/// An HTTP client over libcurl's easy interface. Each transfer blocks a thread of a dedicated
/// `NIOThreadPool`, never Swift's cooperative pool.
///
/// Easy handles are kept between requests (reset, not remade), and a handle keeps its live connections: the next
/// request to the same host reuses one instead of making a new TCP (and TLS) connection. Idle handles are a
/// stack, so requests one after another take the same handle and its connection.
public final class CurlHTTPClient: Sendable {
    let threadPool: NIOThreadPool
    private let ownsPool: Bool
    /// Handles not in a transfer, the most recently used last.
    private let idle: Mutex<[EasyHandle]>
    /// The most idle handles kept: a handle returned past it is closed with its connections. As many as transfers
    /// that run at once (the pool's threads), so a burst keeps its connections for the next one.
    let maxIdleHandles: Int

    /// A client with its own pool of `threads` threads (stopped by `shutdown()`).
    public init(threads: Int = 4) {
        Self.globalInit
        self.threadPool = NIOThreadPool(numberOfThreads: threads)
        self.threadPool.start()
        self.ownsPool = true
        self.maxIdleHandles = threads
        self.idle = Mutex([])
    }

    /// A client on a pool it does not own; `maxIdleHandles` is best set to the pool's thread count.
    public init(threadPool: NIOThreadPool, maxIdleHandles: Int = 4) {
        Self.globalInit
        self.threadPool = threadPool
        self.ownsPool = false
        self.maxIdleHandles = maxIdleHandles
        self.idle = Mutex([])
    }

    private static let globalInit: Void = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()

    /// Closes the idle handles (and their connections), and stops the pool if it is the client's own.
    public func shutdown() async {
        if ownsPool { try? await threadPool.shutdownGracefully() }
        let closed = idle.withLock { handles in
            let all = handles
            handles.removeAll()
            return all
        }
        _ = closed  // released here, outside the lock
    }

    public func send(_ request: CurlRequest) async throws -> CurlResponse {
        try await threadPool.runIfActive {
            let handle = try self.checkOut()
            defer { self.checkIn(handle) }
            return try Self.perform(request, on: handle)
        }
    }

    /// The most recently used idle handle, reset to curl's defaults (its connections stay), or a new one.
    func checkOut() throws -> EasyHandle {
        if let handle = idle.withLock({ $0.popLast() }) {
            curl_easy_reset(handle.pointer)
            return handle
        }
        guard let pointer = curl_easy_init() else { throw CurlError(code: -1, message: "curl_easy_init failed") }
        return EasyHandle(pointer)
    }

    /// Keeps the handle for the next transfer, unless `maxIdleHandles` are kept already: then it is released when
    /// its transfer's closure ends (outside the lock), closing its connections.
    func checkIn(_ handle: EasyHandle) {
        idle.withLock { handles in
            if handles.count < maxIdleHandles { handles.append(handle) }
        }
    }

    /// Performs one transfer synchronously on `handle`, which has curl's default options (new or reset).
    private static func perform(_ request: CurlRequest, on easy: EasyHandle) throws -> CurlResponse {
        let handle = easy.pointer
        let sink = ResponseSink()
        let sinkPointer = Unmanaged.passUnretained(sink).toOpaque()
        let headerList = try setRequestOptions(request, on: handle)
        defer { curl_slist_free_all(headerList) }
        try check(wb_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, request.timeoutMilliseconds))
        try check(wb_curl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, ""))
        // A declared length past the limit ends the transfer before its body; the write callback bounds the rest
        // (no or a lying Content-Length, a compressed body that inflates).
        try check(wb_curl_setopt_long(handle, CURLOPT_MAXFILESIZE, request.maxResponseBytes))
        sink.maxBodyBytes = request.maxResponseBytes
        try check(wb_curl_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, user in
            let sink = Unmanaged<ResponseSink>.fromOpaque(user!).takeUnretainedValue()
            let length = size * count
            if let data, length > 0 {
                guard sink.body.count <= sink.maxBodyBytes - length else {
                    sink.tooLarge = true
                    return 0  // curl abandons the transfer (CURLE_WRITE_ERROR)
                }
                sink.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            }
            return length
        })
        try check(wb_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, sinkPointer))
        try check(wb_curl_setopt_write_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, user in
            let sink = Unmanaged<ResponseSink>.fromOpaque(user!).takeUnretainedValue()
            let length = size * count
            if let data, length > 0 {
                sink.headerBytes += length
                guard sink.headerBytes <= CurlHTTPClient.maxHeaderBytes else {
                    sink.tooLarge = true
                    return 0
                }
                sink.addHeaderLine(String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self))
            }
            return length
        })
        try check(wb_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, sinkPointer))

        let code = performTransfer(request, on: handle)
        if sink.tooLarge || code == CURLE_FILESIZE_EXCEEDED {
            throw CurlError(code: CurlError.tooLargeCode, message: "response larger than \(request.maxResponseBytes) bytes")
        }
        try check(code)
        var status = 0
        _ = wb_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return CurlResponse(status: status, headers: sink.headers, body: sink.body)
    }

    /// Sets what every transfer of `request` shares (a plain one and a stream): URL, method, connect timeout, protocols,
    /// headers, signature. Returns the header list, which must outlive the transfer (`curl_slist_free_all` after it).
    static func setRequestOptions(_ request: CurlRequest, on handle: UnsafeMutableRawPointer) throws -> UnsafeMutablePointer<curl_slist>? {
        var headerList: UnsafeMutablePointer<curl_slist>? = nil
        for (name, value) in request.headers {
            headerList = curl_slist_append(headerList, "\(name): \(value)")
        }
        if request.awsSigV4 == nil {
            // Without this, curl sends "Expect: 100-continue" for larger bodies and waits for the server.
            headerList = curl_slist_append(headerList, "Expect:")
        }
        do {
            try check(wb_curl_setopt_string(handle, CURLOPT_URL, request.url))
            try check(wb_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method))
            try check(wb_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
            try check(wb_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, request.connectTimeoutMilliseconds))
            try check(wb_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
            try check(wb_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList))
            if let signature = request.awsSigV4 {
                try check(wb_curl_setopt_aws_sigv4(handle, signature.provider, signature.accessKeyID, signature.secretAccessKey))
                // curl 7.88 signs every header in the list, an empty "Expect:" too (as `expect;` with no value), and
                // the server then computes another signature: so no "Expect:" here; curl may add "Expect: 100-continue"
                // itself (unsigned, as S3 allows), and with this it sends the body at once instead of waiting 1 s.
                try check(wb_curl_setopt_long(handle, CURLOPT_EXPECT_100_TIMEOUT_MS, 0))
            }
            if request.method == "HEAD" {
                try check(wb_curl_setopt_long(handle, CURLOPT_NOBODY, 1))
            }
        } catch {
            curl_slist_free_all(headerList)
            throw error
        }
        return headerList
    }

    /// Runs the transfer set up on `handle`, sending the request's body if it has one (which lives for the call).
    static func performTransfer(_ request: CurlRequest, on handle: UnsafeMutableRawPointer) -> CURLcode {
        let body = request.body ?? []
        return body.withUnsafeBufferPointer { buffer in
            if request.body != nil {
                _ = wb_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, buffer.count)
                _ = wb_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!))
            }
            return curl_easy_perform(handle)
        }
    }

    /// The most header bytes accepted from one transfer (every response of it, redirects included).
    static let maxHeaderBytes = 256 << 10

    static func check(_ code: CURLcode) throws {
        guard code != CURLE_OK else { return }
        throw CurlError(code: Int(code.rawValue), message: String(cString: curl_easy_strerror(code)))
    }
}

/// One easy handle, used by one transfer at a time: the client hands it to a transfer and takes it back after
/// (`checkOut`/`checkIn`), so no two threads touch it at once.
final class EasyHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer

    init(_ pointer: UnsafeMutableRawPointer) { self.pointer = pointer }

    deinit { curl_easy_cleanup(pointer) }
}

/// Collects one transfer's body and headers; used only by the thread running that transfer.
private final class ResponseSink {
    var body: [UInt8] = []
    var maxBodyBytes = Int.max
    var headerBytes = 0
    /// Set when a callback stopped the transfer for its size.
    var tooLarge = false
    var headers: [(String, String)] = []

    func addHeaderLine(_ line: String) {
        if line.hasPrefix("HTTP/") {
            headers.removeAll()  // a new response (after a redirect or 100 Continue)
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
        headers.append((name, value))
    }
}
