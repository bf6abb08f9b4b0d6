import Foundation

/// One connection on a plain POSIX socket, driven step by step on a thread of its own (never the cooperative pool):
/// what a slow, stalled or hostile client does (send part of a head and stop, trickle a body, write a whole body
/// before reading), then what it reads until the server ends the connection.
struct RawConnection: Sendable {
    enum Step: Sendable {
        case send([UInt8])
        /// Sends the bytes `chunk` at a time, pausing `every` between them: a client on a slow link, or a slowloris.
        case trickle([UInt8], chunk: Int, every: Duration)
        /// The client does nothing (it stalls, or it is slow to write the rest).
        case pause(Duration)
        /// Reads until the server ends the connection (or `socketTimeoutSeconds` passes): the answers, whole.
        case readToEnd
        /// Reads until `count` occurrences of `marker` came (a stream's heartbeats), then goes on with the next step.
        case readUntil(marker: [UInt8], count: Int)
    }

    struct Outcome: Sendable, CustomStringConvertible {
        /// Everything the server sent.
        var received: [UInt8] = []
        /// The server ended the connection in order (an end of stream was read).
        var endOfStream = false
        /// Why a write failed (the server had reset the connection), if one did.
        var writeError: String?
        /// Why a read failed (a reset, or the client's own timeout), if one did.
        var readError: String?
        /// How many `readUntil` markers were read.
        var markers = 0

        /// The answers in what was received (status, headers, body by `Content-Length`); a stream's open answer has
        /// its head only.
        var answers: [RawHTTPAnswer] { RawHTTPAnswer.parse(received) }
        var text: String { String(decoding: received.prefix(2000), as: UTF8.self) }
        var description: String {
            "received \(received.count) B (\(text.prefix(400))), end of stream \(endOfStream), write error \(writeError ?? "none"), "
                + "read error \(readError ?? "none")"
        }
    }

    let port: Int
    /// How long one blocking write or read may wait before the client gives up (a test fails, never hangs).
    var socketTimeoutSeconds = 30

    func run(_ steps: [Step]) async -> Outcome {
        let port = port
        let timeout = socketTimeoutSeconds
        return await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: Self.run(port: port, timeout: timeout, steps: steps)) }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    private static func run(port: Int, timeout: Int, steps: [Step]) -> Outcome {
        var outcome = Outcome()
        let fd: Int32
        switch LoopbackSocket.open(port: port, timeoutSeconds: timeout) {
        case .success(let opened): fd = opened
        case .failure(let failure):
            outcome.writeError = failure.reason
            return outcome
        }
        defer { close(fd) }
        func write(_ bytes: ArraySlice<UInt8>) -> Bool {
            var written = 0
            return bytes.withUnsafeBytes { raw in
                while written < raw.count {
                    let n = send(fd, raw.baseAddress! + written, raw.count - written, Int32(MSG_NOSIGNAL))
                    if n <= 0 {
                        outcome.writeError = String(cString: strerror(errno))
                        return false
                    }
                    written += n
                }
                return true
            }
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        /// Reads once: false at the end of stream or an error.
        func readOnce() -> Bool {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                outcome.readError = String(cString: strerror(errno))
                return false
            }
            if n == 0 {
                outcome.endOfStream = true
                return false
            }
            outcome.received += buffer[0..<n]
            return true
        }
        steps: for step in steps {
            switch step {
            case .send(let bytes):
                if !write(bytes[...]) { break steps }
            case .trickle(let bytes, let chunk, let every):
                var start = 0
                while start < bytes.count {
                    let end = min(bytes.count, start + max(1, chunk))
                    if !write(bytes[start..<end]) { break steps }
                    start = end
                    if start < bytes.count { Thread.sleep(forTimeInterval: every.seconds) }
                }
            case .pause(let duration):
                Thread.sleep(forTimeInterval: duration.seconds)
            case .readToEnd:
                while readOnce() {}
                break steps
            case .readUntil(let marker, let count):
                var searched = 0
                while outcome.markers < count {
                    guard readOnce() else { break steps }
                    // Count the markers in what came (a marker split between two reads is found whole next time).
                    var i = max(0, searched - marker.count + 1)
                    while i + marker.count <= outcome.received.count {
                        if outcome.received[i] == marker[0], Array(outcome.received[i..<(i + marker.count)]) == marker {
                            outcome.markers += 1
                            i += marker.count
                        } else {
                            i += 1
                        }
                    }
                    searched = i
                }
            }
        }
        return outcome
    }
}

/// One HTTP/1.1 answer read off a raw connection.
struct RawHTTPAnswer: Sendable {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]

    var object: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
    var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }
    var errorMessage: String? { (object["error"] as? [String: Any])?["message"] as? String }

    /// The answers one after another; an answer whose body has no `Content-Length` (a stream) takes the rest.
    static func parse(_ bytes: [UInt8]) -> [RawHTTPAnswer] {
        var answers: [RawHTTPAnswer] = []
        var start = 0
        while start < bytes.count {
            guard let headEnd = find([13, 10, 13, 10], in: bytes, from: start) else { break }
            let lines = String(decoding: bytes[start..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
            guard let status = lines.first.flatMap({ $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } }) else { break }
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let bodyStart = headEnd + 4
            let length = headers["content-length"].flatMap { Int($0) } ?? (bytes.count - bodyStart)
            let bodyEnd = min(bytes.count, bodyStart + length)
            answers.append(RawHTTPAnswer(status: status, headers: headers, body: Array(bytes[bodyStart..<bodyEnd])))
            start = bodyEnd
        }
        return answers
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard haystack.count - from >= needle.count else { return nil }
        for i in from...(haystack.count - needle.count) where haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle {
            return i
        }
        return nil
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
