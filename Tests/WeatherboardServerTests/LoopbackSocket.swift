import Foundation

/// A blocking TCP socket to the test server on 127.0.0.1: the raw clients' (`RawHTTPClient`, `RawConnection`,
/// `StreamClient`) one way to connect.
enum LoopbackSocket {
    /// Connects `fd` to 127.0.0.1:`port`: nil, or why not.
    static func connect(_ fd: Int32, port: Int) -> String? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return connected == 0 ? nil : "connect: \(String(cString: strerror(errno)))"
    }

    /// A new socket whose blocking sends and receives each give up after `timeoutSeconds`, connected to `port`; or why
    /// not. The caller closes it.
    static func open(port: Int, timeoutSeconds: Int) -> Result<Int32, SocketFailure> {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return .failure(SocketFailure(reason: "socket: \(String(cString: strerror(errno)))")) }
        var time = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        if let reason = connect(fd, port: port) {
            close(fd)
            return .failure(SocketFailure(reason: reason))
        }
        return .success(fd)
    }

    struct SocketFailure: Error {
        let reason: String
    }
}
