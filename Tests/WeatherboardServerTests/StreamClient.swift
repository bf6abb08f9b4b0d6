import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import Testing

/// A server-sent events client for the live board's tests (CONTRACT §11), on a plain POSIX socket read by a thread of
/// its own (never Swift's cooperative pool): it sends `GET <path>` with the given headers, reads the answer's head,
/// de-chunks the body and parses SSE messages (`id`, `event`, `data`, `retry`; comments are counted, not delivered).
/// Tests take the messages with `next(timeout:)`, which fails after a deadline instead of hanging.
///
/// A client can be made slow on purpose: a small `SO_RCVBUF` and `pauseAfterHead` (it reads the head, then nothing
/// until `resumeReading()`), so the server's writes to it back up into the kernel's buffers.
final class StreamClient: Sendable {
    /// One SSE message: the fields of one block up to its blank line. A block with only `id:` or `retry:` (the stream's
    /// first message) is delivered too, with `event` and `data` nil.
    struct Message: Sendable, CustomStringConvertible {
        var id: String?
        var event: String?
        var data: String?
        var retry: Int?
        /// A comment line's text after the `:` (only with `Options.deliverComments`; such a message has nothing else).
        var comment: String?

        /// The data as a JSON object (empty when it is not one).
        var json: [String: Any] {
            guard let data else { return [:] }
            return (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:]
        }

        /// The `id` inside the JSON data (a post's, or a `remove` event's).
        var postID: String? {
            if event == "report" { return (json["post"] as? [String: Any])?["id"] as? String }
            if event == "resolved" { return json["postId"] as? String }
            return json["id"] as? String
        }

        var description: String {
            "[\(comment.map { "comment '\($0)', " } ?? "")id: \(id ?? "-"), event: \(event ?? "-"), retry: \(retry.map(String.init) ?? "-"), data: \(data.map { String($0.prefix(160)) } ?? "-")]"
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    struct Options: Sendable {
        var token: String?
        var lastEventID: String?
        /// The client address the server sees (`X-Forwarded-For` from the trusted loopback proxy).
        var clientIP: String
        /// `SO_RCVBUF` before connecting (the kernel doubles it, and keeps a minimum).
        var receiveBufferBytes: Int?
        /// Read the head, then nothing until `resumeReading()`.
        var pauseAfterHead = false
        /// Deliver comment lines (heartbeats) as messages too.
        var deliverComments = false
        var extraHeaders: [(String, String)] = []
    }

    private struct State {
        var status: Int?
        var headers: [String: String] = [:]
        /// A non-chunked body (an error answer), whole.
        var body: [UInt8] = []
        var headError: String?
        var headWaiter: CheckedContinuation<Void, Never>?
        var messages: [Message] = []
        var delivered = 0
        var waiters: [(id: Int, continuation: CheckedContinuation<Message?, Never>)] = []
        var nextWaiter = 0
        var endWaiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>)] = []
        var lastEventID: String?
        var comments = 0
        /// The terminating zero-length chunk arrived: the server ended the body cleanly.
        var finished = false
        /// The connection ended (EOF, a reset, or `close()`).
        var closed = false
        var closeReason: String?
        var closedByClient = false
        var pauseAfterHead = false
        var paused = false
        var fdOpen = true
        var bytesRead = 0
    }

    private let fd: Int32
    private let state = Mutex(State())
    private let resume = DispatchSemaphore(value: 0)

    private init(fd: Int32, paused: Bool) {
        self.fd = fd
        state.withLock { $0.pauseAfterHead = paused }
    }

    // MARK: Opening

    /// Connects to 127.0.0.1:`port`, sends the request and returns once the answer's head has arrived (its status in
    /// `status`); the body goes on being read on the client's thread.
    static func open(port: Int, path: String, options: Options, timeout: Duration = .seconds(20)) async throws -> StreamClient {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        if let bytes = options.receiveBufferBytes {
            var size = Int32(bytes)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let client = StreamClient(fd: fd, paused: options.pauseAfterHead)
        var lines = ["GET \(path) HTTP/1.1", "Host: 127.0.0.1", "Accept: text/event-stream", "X-Forwarded-For: \(options.clientIP)"]
        if let token = options.token { lines.append("Authorization: Bearer \(token)") }
        if let id = options.lastEventID { lines.append("Last-Event-ID: \(id)") }
        lines += options.extraHeaders.map { "\($0.0): \($0.1)" }
        let request = Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        let deliverComments = options.deliverComments
        let thread = Thread { client.run(port: port, request: request, deliverComments: deliverComments) }
        thread.stackSize = 256 * 1024
        thread.name = "sse-client"
        // The head must come within `timeout`: past it the connection is closed, which ends the wait with an error.
        let watchdog = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            client.close()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            client.state.withLock { $0.headWaiter = continuation }
            thread.start()
        }
        watchdog.cancel()
        if let error = client.state.withLock({ $0.headError }) {
            client.close()
            throw Failure(description: "stream \(path): \(error)")
        }
        return client
    }

    // MARK: What arrived

    var status: Int { state.withLock { $0.status ?? 0 } }

    func header(_ name: String) -> String? { state.withLock { $0.headers[name.lowercased()] } }

    /// An error answer's JSON body.
    var object: [String: Any] {
        let body = state.withLock { $0.body }
        return (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }

    /// The id of the last message dispatched with an `id:` (what a browser's EventSource would send back).
    var lastEventID: String? { state.withLock { $0.lastEventID } }

    /// The server ended the stream: the body's terminating chunk, or the connection closed (not by `close()`).
    var ended: Bool { state.withLock { $0.finished || ($0.closed && !$0.closedByClient) } }

    /// The body ended with its terminating chunk (a clean end of stream, not a cut connection).
    var endedCleanly: Bool { state.withLock { $0.finished } }

    /// Heartbeat comments received.
    var comments: Int { state.withLock { $0.comments } }

    var bytesRead: Int { state.withLock { $0.bytesRead } }

    /// Messages parsed but not yet taken with `next`.
    var pending: Int { state.withLock { $0.messages.count } }

    /// The next message, in order; throws when the stream ends first or nothing arrives within `timeout` (a deadline
    /// that fails the test, never a delay).
    func next(timeout: Duration = .seconds(20)) async throws -> Message {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let expiry = Task { [weak self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self?.expire(waiter: id)
        }
        defer { expiry.cancel() }
        let message: Message? = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Message?, Never>) in
                let ready: Message?? = state.withLock { state in
                    if !state.messages.isEmpty {
                        state.delivered += 1
                        return .some(state.messages.removeFirst())
                    }
                    if state.finished || state.closed { return .some(nil) }
                    state.waiters.append((id, continuation))
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            self.expire(waiter: id)
        }
        if let message { return message }
        let (finished, closed, reason, delivered) = state.withLock { ($0.finished, $0.closed, $0.closeReason, $0.delivered) }
        if finished || closed {
            throw Failure(description: "the stream ended after \(delivered) messages (\(finished ? "terminating chunk" : reason ?? "closed"))")
        }
        throw Failure(description: "no message within \(timeout) (\(delivered) messages so far)")
    }

    /// The next message that has an `event` (skips the id-only and retry-only ones, and comments).
    func nextEvent(timeout: Duration = .seconds(20)) async throws -> Message {
        while true {
            let message = try await next(timeout: timeout)
            if message.event != nil { return message }
        }
    }

    /// The next event about one of `postIDs` (skips everything else: other tests' reports on a moderation stream).
    func nextEvent(about postIDs: Set<String>, timeout: Duration = .seconds(20)) async throws -> Message {
        while true {
            let message = try await nextEvent(timeout: timeout)
            if let id = message.postID, postIDs.contains(id) { return message }
        }
    }

    /// Waits until the server ends the stream (reading and keeping whatever comes before); false if it has not within
    /// `timeout`. A paused client starts reading again.
    func waitForEnd(timeout: Duration = .seconds(20)) async -> Bool {
        resumeReading()
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let expiry = Task { [weak self] in
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self?.expireEnd(waiter: id)
        }
        defer { expiry.cancel() }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let now = state.withLock { state in
                if state.finished || state.closed { return true }
                state.endWaiters.append((id, continuation))
                return false
            }
            if now { continuation.resume(returning: true) }
        }
    }

    /// Every message up to the end of the stream (after `waitForEnd`), without waiting.
    func drain() -> [Message] {
        state.withLock { state in
            defer {
                state.delivered += state.messages.count
                state.messages = []
            }
            return state.messages
        }
    }

    func resumeReading() {
        let wasPaused = state.withLock { state in
            defer { state.paused = false }
            return state.paused
        }
        if wasPaused { resume.signal() }
    }

    /// Ends the connection from the client's side.
    func close() {
        let wasPaused = state.withLock { state in
            if !state.closed { state.closedByClient = true }
            if state.fdOpen { shutdown(fd, Int32(SHUT_RDWR)) }
            defer { state.paused = false }
            return state.paused
        }
        if wasPaused { resume.signal() }
    }

    deinit {
        close()
    }

    private func expire(waiter id: Int) {
        let continuation = state.withLock { state -> CheckedContinuation<Message?, Never>? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index).continuation
        }
        continuation?.resume(returning: nil)
    }

    private func expireEnd(waiter id: Int) {
        let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let index = state.endWaiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.endWaiters.remove(at: index).continuation
        }
        continuation?.resume(returning: false)
    }

    // MARK: The reading thread

    private func run(port: Int, request: [UInt8], deliverComments: Bool) {
        var parser = Parser()
        parser.deliverComments = deliverComments
        var reason = "end of stream"
        defer {
            let (head, waiters, ends) = state.withLock { state in
                state.closed = true
                if state.closeReason == nil { state.closeReason = reason }
                if state.status == nil && state.headError == nil { state.headError = reason }
                state.fdOpen = false
                closeDescriptor(fd)
                defer {
                    state.headWaiter = nil
                    state.waiters = []
                    state.endWaiters = []
                }
                return (state.headWaiter, state.waiters, state.endWaiters)
            }
            head?.resume()
            waiters.forEach { $0.continuation.resume(returning: nil) }
            ends.forEach { $0.continuation.resume(returning: true) }
        }
        if let failure = LoopbackSocket.connect(fd, port: port) {
            reason = failure
            return
        }
        var written = 0
        while written < request.count {
            let n = request.withUnsafeBytes { send(fd, $0.baseAddress! + written, $0.count - written, Int32(MSG_NOSIGNAL)) }
            if n <= 0 {
                reason = "send: \(String(cString: strerror(errno)))"
                return
            }
            written += n
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            if state.withLock({ $0.paused }) { resume.wait() }
            if state.withLock({ $0.closedByClient }) {
                reason = "closed by the client"
                return
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR { continue }
                reason = "recv: \(String(cString: strerror(errno)))"
                return
            }
            if n == 0 {
                reason = "connection closed by the server"
                return
            }
            let output = parser.feed(buffer[0..<n])
            publish(output, bytes: n)
            if let error = output.error {
                reason = error
                return
            }
        }
    }

    private func publish(_ output: Parser.Output, bytes: Int) {
        var headWaiter: CheckedContinuation<Void, Never>?
        var handed: [(CheckedContinuation<Message?, Never>, Message?)] = []
        var ends: [CheckedContinuation<Bool, Never>] = []
        state.withLock { state in
            state.bytesRead += bytes
            if let head = output.head {
                state.status = head.status
                state.headers = head.headers
                if head.status == 200 && state.pauseAfterHead { state.paused = true }
            }
            if output.bodyComplete { state.body = output.body }
            // A stream is handed over at its head; an error answer once its whole body is here.
            if state.headWaiter != nil, state.status == 200 || output.bodyComplete || output.finished {
                headWaiter = state.headWaiter
                state.headWaiter = nil
            }
            state.comments += output.comments
            for message in output.messages {
                if let id = message.id { state.lastEventID = id }
                if !state.waiters.isEmpty {
                    state.delivered += 1
                    handed.append((state.waiters.removeFirst().continuation, message))
                } else {
                    state.messages.append(message)
                }
            }
            if output.finished {
                state.finished = true
                ends = state.endWaiters.map(\.continuation)
                state.endWaiters = []
                // Nothing more will come: whoever still waits is told the stream ended.
                for waiter in state.waiters { handed.append((waiter.continuation, nil)) }
                state.waiters = []
            }
        }
        headWaiter?.resume()
        for (continuation, message) in handed { continuation.resume(returning: message) }
        ends.forEach { $0.resume(returning: true) }
    }

    // MARK: Parsing

    /// HTTP/1.1 head, chunked transfer coding and SSE, fed bytes as they arrive.
    struct Parser {
        struct Head {
            var status: Int
            var headers: [String: String]
        }

        struct Output {
            var head: Head?
            var messages: [Message] = []
            var comments = 0
            var finished = false
            var bodyComplete = false
            var body: [UInt8] = []
            var error: String?
        }

        private enum Phase {
            case head
            case chunkSize
            case chunkData(remaining: Int)
            case chunkEnd
            case trailers
            case contentLength(remaining: Int)
            case done
        }

        var deliverComments = false
        private var phase = Phase.head
        private var pending: [UInt8] = []
        private var body: [UInt8] = []
        /// SSE: the current line's bytes, and the block being built.
        private var line: [UInt8] = []
        private var lastWasCR = false
        private var block = Message()
        private var blockHasField = false
        private var dataLines: [String] = []

        mutating func feed(_ bytes: ArraySlice<UInt8>) -> Output {
            var output = Output()
            pending += bytes
            var index = 0
            loop: while true {
                switch phase {
                case .head:
                    guard let end = Self.find([13, 10, 13, 10], in: pending, from: index) else { break loop }
                    let lines = String(decoding: pending[index..<end], as: UTF8.self).components(separatedBy: "\r\n")
                    index = end + 4
                    let status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } } ?? 0
                    var headers: [String: String] = [:]
                    for line in lines.dropFirst() {
                        guard let colon = line.firstIndex(of: ":") else { continue }
                        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    }
                    output.head = Head(status: status, headers: headers)
                    if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
                        phase = .chunkSize
                    } else {
                        phase = .contentLength(remaining: headers["content-length"].flatMap { Int($0) } ?? 0)
                    }
                case .contentLength(let remaining):
                    let take = min(remaining, pending.count - index)
                    body += pending[index..<(index + take)]
                    index += take
                    if remaining - take > 0 {
                        phase = .contentLength(remaining: remaining - take)
                        break loop
                    }
                    phase = .done
                    output.bodyComplete = true
                    output.body = body
                    output.finished = true
                case .chunkSize:
                    guard let end = Self.find([13, 10], in: pending, from: index) else { break loop }
                    let text = String(decoding: pending[index..<end], as: UTF8.self)
                    index = end + 2
                    guard let size = Int(text.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? "", radix: 16), size >= 0 else {
                        output.error = "bad chunk size line '\(text)'"
                        break loop
                    }
                    phase = size == 0 ? .trailers : .chunkData(remaining: size)
                case .chunkData(let remaining):
                    let take = min(remaining, pending.count - index)
                    if take == 0 { break loop }
                    sse(pending[index..<(index + take)], into: &output)
                    index += take
                    phase = remaining - take > 0 ? .chunkData(remaining: remaining - take) : .chunkEnd
                case .chunkEnd:
                    guard pending.count - index >= 2 else { break loop }
                    guard pending[index] == 13, pending[index + 1] == 10 else {
                        output.error = "chunk not followed by CRLF"
                        break loop
                    }
                    index += 2
                    phase = .chunkSize
                case .trailers:
                    guard let end = Self.find([13, 10], in: pending, from: index) else { break loop }
                    let empty = end == index
                    index = end + 2
                    if empty {
                        phase = .done
                        output.finished = true
                    }
                case .done:
                    index = pending.count
                    break loop
                }
            }
            pending.removeFirst(index)
            return output
        }

        /// SSE lines end with LF, CR or CRLF; a blank line dispatches the block.
        private mutating func sse(_ bytes: ArraySlice<UInt8>, into output: inout Output) {
            for byte in bytes {
                if byte == 10 && lastWasCR {
                    lastWasCR = false
                    continue
                }
                lastWasCR = byte == 13
                if byte == 10 || byte == 13 {
                    endLine(into: &output)
                } else {
                    line.append(byte)
                }
            }
        }

        private mutating func endLine(into output: inout Output) {
            defer { line = [] }
            if line.isEmpty {
                if blockHasField {
                    if !dataLines.isEmpty { block.data = dataLines.joined(separator: "\n") }
                    output.messages.append(block)
                }
                block = Message()
                blockHasField = false
                dataLines = []
                return
            }
            if line[0] == UInt8(ascii: ":") {
                output.comments += 1
                if deliverComments { output.messages.append(Message(comment: String(decoding: line.dropFirst(), as: UTF8.self))) }
                return
            }
            let text = String(decoding: line, as: UTF8.self)
            var field = text
            var value = ""
            if let colon = text.firstIndex(of: ":") {
                field = String(text[..<colon])
                value = String(text[text.index(after: colon)...])
                if value.hasPrefix(" ") { value.removeFirst() }
            }
            switch field {
            case "id":
                block.id = value
                blockHasField = true
            case "event":
                block.event = value
                blockHasField = true
            case "data":
                dataLines.append(value)
                blockHasField = true
            case "retry":
                block.retry = Int(value)
                blockHasField = true
            default:
                break
            }
        }

        static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
            guard haystack.count - start >= needle.count else { return nil }
            var i = start
            while i <= haystack.count - needle.count {
                if haystack[i] == needle[0] {
                    var match = true
                    for j in 1..<needle.count where haystack[i + j] != needle[j] {
                        match = false
                        break
                    }
                    if match { return i }
                }
                i += 1
            }
            return nil
        }
    }
}

/// `close(2)` (inside the client, `close` is its own method).
private func closeDescriptor(_ fd: Int32) {
    _ = Glibc.close(fd)
}

extension TestServer {
    /// Opens `GET path` as an event stream from `clientIP` (this server's own address unless given).
    func stream(
        _ path: String, token: String? = nil, lastEventID: String? = nil, clientIP: String? = nil, receiveBufferBytes: Int? = nil,
        pauseAfterHead: Bool = false, deliverComments: Bool = false, headers: [(String, String)] = []
    ) async throws -> StreamClient {
        try await StreamClient.open(
            port: port, path: path,
            options: StreamClient.Options(
                token: token, lastEventID: lastEventID, clientIP: clientIP ?? self.clientIP, receiveBufferBytes: receiveBufferBytes, pauseAfterHead: pauseAfterHead,
                deliverComments: deliverComments, extraHeaders: headers
            )
        )
    }
}
