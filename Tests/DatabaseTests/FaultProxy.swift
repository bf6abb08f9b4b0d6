import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy in front of the test database that a test controls, to stage what a real server does only on
/// a bad day. Sessions are forwarded byte for byte, except:
/// - a cancel request (the first message of a cancel connection) is accepted and never answered, like a
///   server whose cancel port stalls: the connection stays open until `close()`;
/// - after `failNextRollback()`, the next simple-protocol `ROLLBACK` is not forwarded: the proxy answers it
///   with an error and "still in a failed transaction", so the client's session looks stuck in it (and the
///   server's really is).
/// Tests wait for what happened with `reached`.
final class FaultProxy: Sendable {
    enum Event: Sendable, Hashable {
        /// A cancel request arrived and is being held.
        case cancelHeld
        /// A ROLLBACK was answered with an error.
        case rollbackFailed
        /// A client closed a forwarded session.
        case sessionClosed
    }

    let port: Int
    /// The test database's URL, through this proxy.
    let url: String
    private let listener: Int32
    private let upstream: (host: String, port: Int)
    private let state = Mutex(State())

    private struct State {
        var sockets: [Int32] = []
        var failRollback = false
        var closed = false
        var counts: [Event: Int] = [:]
        var waiters: [UUID: (event: Event, count: Int, continuation: CheckedContinuation<Bool, Never>)] = [:]
    }

    init() throws {
        let target = try #require(URLComponents(string: TestDatabase.url))
        upstream = (target.host ?? "127.0.0.1", target.port ?? 5432)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(listener, 16) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        var through = target
        through.host = "127.0.0.1"
        through.port = port
        self.listener = listener
        self.port = port
        self.url = through.string ?? ""
        let proxy = self
        Thread.detachNewThread { proxy.acceptLoop() }
    }

    /// The next ROLLBACK sent as a simple query fails (see the type's description).
    func failNextRollback() {
        state.withLock { $0.failRollback = true }
    }

    /// Stops accepting and closes every connection (a held cancel request then sees the server hang up).
    func close() {
        let sockets: [Int32] = state.withLock { state in
            state.closed = true
            defer { state.sockets.removeAll() }
            return state.sockets
        }
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        for socket in sockets {
            shutdown(socket, Int32(SHUT_RDWR))
            Glibc.close(socket)
        }
    }

    /// Returns true once `event` has happened `count` times in all; false after 30 s (bounded: a test may
    /// fail, never hang).
    func reached(_ event: Event, _ count: Int = 1) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.wait(event, count) }
            group.addTask {
                try? await Task.sleep(for: .seconds(30))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    private func wait(_ event: Event, _ count: Int) async -> Bool {
        let id = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let done: Bool = state.withLock { state in
                    if state.counts[event, default: 0] >= count { return true }
                    state.waiters[id] = (event, count, continuation)
                    return false
                }
                if done { continuation.resume(returning: true) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
        }
    }

    private func record(_ event: Event) {
        let ready: [CheckedContinuation<Bool, Never>] = state.withLock { state in
            state.counts[event, default: 0] += 1
            let ready = state.waiters.filter { $0.value.event == event && state.counts[event, default: 0] >= $0.value.count }
            for id in ready.keys { state.waiters.removeValue(forKey: id) }
            return ready.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume(returning: true) }
    }

    // MARK: Sessions

    private func track(_ socket: Int32) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.sockets.append(socket)
            return true
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            guard track(client) else {
                Glibc.close(client)
                return
            }
            let proxy = self
            Thread.detachNewThread { proxy.serve(client) }
        }
    }

    /// Reads the client's messages and forwards them, holding cancel requests and failing an armed ROLLBACK.
    private func serve(_ client: Int32) {
        var server: Int32 = -1
        let clientWrites = NSLock()
        // Untyped messages first (SSL or GSS negotiation, then the startup packet or a cancel request).
        while true {
            guard let header = readExactly(client, 4) else { return }
            let length = Int(UInt32(bigEndian: header.withUnsafeBytes { $0.load(as: UInt32.self) }))
            guard length >= 8, let body = readExactly(client, length - 4) else { return }
            let code = UInt32(bigEndian: body.withUnsafeBytes { $0.load(as: UInt32.self) })
            if code == 80_877_102 {
                record(.cancelHeld)
                return  // never answered; closed by `close()`
            }
            if server < 0 {
                server = connectUpstream()
                guard server >= 0, track(server) else { return }
                let proxy = self
                let upstream = server
                Thread.detachNewThread { proxy.pump(from: upstream, to: client, writes: clientWrites) }
            }
            guard writeAll(server, header + body) else { return }
            // SSLRequest and GSSENCRequest are answered with one byte; anything else started the session.
            if code != 80_877_103 && code != 80_877_104 { break }
        }
        while true {
            guard let header = readExactly(client, 5) else {
                record(.sessionClosed)
                return
            }
            let length = Int(UInt32(bigEndian: header[1..<5].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }))
            guard length >= 4, let body = readExactly(client, length - 4) else {
                record(.sessionClosed)
                return
            }
            if header[0] == UInt8(ascii: "Q"), String(decoding: body.prefix { $0 != 0 }, as: UTF8.self) == "ROLLBACK",
                state.withLock({ state in defer { state.failRollback = false }; return state.failRollback })
            {
                let failed = clientWrites.withLock { writeAll(client, Self.rollbackFailure) }
                record(.rollbackFailed)
                guard failed else { return }
                continue
            }
            guard writeAll(server, header + body) else { return }
        }
    }

    private func pump(from source: Int32, to destination: Int32, writes: NSLock) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = read(source, &buffer, buffer.count)
            guard count > 0 else {
                shutdown(destination, Int32(SHUT_WR))
                return
            }
            let sent = writes.withLock { writeAll(destination, Array(buffer[0..<count])) }
            guard sent else { return }
        }
    }

    private func connectUpstream() -> Int32 {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(upstream.host == "localhost" ? "127.0.0.1" : upstream.host)
        address.sin_port = UInt16(upstream.port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if connected != 0 {
            Glibc.close(server)
            return -1
        }
        return server
    }

    /// ErrorResponse, then ReadyForQuery in a failed transaction block ('E').
    private static let rollbackFailure: [UInt8] = {
        var fields: [UInt8] = []
        for (code, value) in [("S", "ERROR"), ("V", "ERROR"), ("C", "XX000"), ("M", "ROLLBACK failed (FaultProxy)")] {
            fields.append(UInt8(ascii: Unicode.Scalar(code)!))
            fields += Array(value.utf8) + [0]
        }
        fields.append(0)
        var message: [UInt8] = [UInt8(ascii: "E")] + withUnsafeBytes(of: UInt32(fields.count + 4).bigEndian, Array.init) + fields
        message += [UInt8(ascii: "Z")] + withUnsafeBytes(of: UInt32(5).bigEndian, Array.init) + [UInt8(ascii: "E")]
        return message
    }()
}

private func readExactly(_ socket: Int32, _ count: Int) -> [UInt8]? {
    var bytes = [UInt8](repeating: 0, count: count)
    var offset = 0
    while offset < count {
        let n = bytes.withUnsafeMutableBytes { read(socket, $0.baseAddress! + offset, count - offset) }
        guard n > 0 else { return nil }
        offset += n
    }
    return bytes
}

private func writeAll(_ socket: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { send(socket, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
        guard n > 0 else { return false }
        offset += n
    }
    return true
}
