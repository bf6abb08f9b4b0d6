import Foundation
import Testing

/// An HTTP/1.1 client on a plain POSIX socket and a thread of its own (never the cooperative pool), for what
/// libcurl will not do: write the whole request before reading a byte of the answer (as Python's `urllib` and many
/// HTTP stacks do), or stop sending in the middle of a body and wait.
struct RawHTTPClient: Sendable {
    let port: Int
    /// How long one blocking write or read may wait before the client gives up (a test may fail, never hang).
    var socketTimeoutSeconds = 20

    struct Answer: Sendable, CustomStringConvertible {
        /// The bytes of the request that the server took before the client stopped writing.
        var written = 0
        /// Why writing stopped early (`errno`'s text), if it did.
        var writeError: String?
        var status: Int?
        var headers: [String: String] = [:]
        var body: [UInt8] = []
        /// Why reading stopped before a whole answer, if it did.
        var readError: String?
        /// The server closed the connection after its answer (an orderly end of stream).
        var closedAfterAnswer = false

        var object: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
        var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }
        var errorMessage: String? { (object["error"] as? [String: Any])?["message"] as? String }
        var description: String {
            "status \(status.map(String.init) ?? "none"), wrote \(written) B\(writeError.map { " (\($0))" } ?? ""), "
                + "read error \(readError ?? "none"), body \(String(decoding: body.prefix(300), as: UTF8.self))"
        }
    }

    /// Connects, writes `head` and then `body` (only its first `sendBytes` when given, and then waits), then reads the
    /// answer: its head, a body of its `Content-Length`, and whether the connection ends after it.
    func exchange(head: String, body: [UInt8], sendBytes: Int? = nil) async -> Answer {
        let port = port
        let timeout = socketTimeoutSeconds
        return await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: Self.run(port: port, timeout: timeout, request: Array(head.utf8) + body.prefix(sendBytes ?? body.count)))
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// A request head with the given lines (`Host` and the terminating blank line added).
    static func head(_ requestLine: String, _ lines: [String]) -> String {
        ([requestLine, "Host: 127.0.0.1"] + lines).joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// A body in chunked transfer coding, `chunkBytes` to a chunk.
    static func chunked(_ body: [UInt8], chunkBytes: Int = 16 * 1024) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(body.count + body.count / chunkBytes * 8 + 16)
        var start = 0
        while start < body.count {
            let end = min(body.count, start + chunkBytes)
            out += Array(String(end - start, radix: 16).utf8) + [13, 10] + body[start..<end] + [13, 10]
            start = end
        }
        return out + Array("0\r\n\r\n".utf8)
    }

    private static func run(port: Int, timeout: Int, request: [UInt8]) -> Answer {
        var answer = Answer()
        let fd: Int32
        switch LoopbackSocket.open(port: port, timeoutSeconds: timeout) {
        case .success(let opened): fd = opened
        case .failure(let failure):
            answer.writeError = failure.reason
            return answer
        }
        defer { close(fd) }
        request.withUnsafeBytes { bytes in
            while answer.written < bytes.count {
                let n = send(fd, bytes.baseAddress! + answer.written, bytes.count - answer.written, Int32(MSG_NOSIGNAL))
                if n <= 0 {
                    answer.writeError = String(cString: strerror(errno))
                    return
                }
                answer.written += n
            }
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var headEnd: Int?
        var expected: Int?
        while true {
            if let headEnd, let expected, received.count >= headEnd + expected { break }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                answer.readError = String(cString: strerror(errno))
                break
            }
            if n == 0 {
                if headEnd == nil || expected == nil { answer.readError = "end of stream before a whole answer" }
                break
            }
            received += buffer[0..<n]
            if headEnd == nil, let end = find([13, 10, 13, 10], in: received) {
                headEnd = end + 4
                let lines = String(decoding: received[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
                answer.status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } }
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    answer.headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                expected = answer.headers["content-length"].flatMap { Int($0) } ?? 0
            }
        }
        if let headEnd, let expected, received.count >= headEnd + expected {
            answer.body = Array(received[headEnd..<(headEnd + expected)])
            // An answer with `Connection: close`: whether the server then ends the connection (read to the end of stream).
            while answer.headers["connection"]?.lowercased() == "close" {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n == 0 { answer.closedAfterAnswer = true }
                if n <= 0 { break }
            }
        }
        return answer
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle {
            return i
        }
        return nil
    }
}
