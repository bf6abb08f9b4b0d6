import Foundation
import NIOCore

/// Reads a request line's method and target as its bytes arrive, before the HTTP decoder buffers them, so a target
/// past `ConnectionDeadlines.maxTargetBytes` is refused (414) at its 8 KiB-and-first byte rather than buffered to
/// the decoder's own bound. Used on a connection's first request, whose first byte is surely the line's first: on a
/// kept-alive connection, where the previous request's bytes end inside a read cannot be told from here (the router's
/// check answers those).
struct RequestTargetScanner {
    enum Outcome: Equatable {
        /// The line goes on: more bytes are needed.
        case more
        /// The target ended within the bound, or the line is not one this scanner judges (the decoder refuses it).
        case done
        /// The target is longer than the bound.
        case tooLong
    }

    private enum State {
        case method(Int)
        case target(Int)
    }

    let limit: Int
    private var state = State.method(0)
    /// Longer than any method this server answers: what follows is not judged here.
    private static let longestMethod = 32

    init(limit: Int) {
        self.limit = limit
    }

    mutating func scan(_ buffer: ByteBuffer) -> Outcome {
        buffer.withUnsafeReadableBytes { bytes in
            // The common case, a whole line within the bound in the line's first read, is one search for its end.
            if case .method(0) = state, let base = bytes.baseAddress {
                let start = bytes.firstIndex { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") } ?? bytes.count
                if memchr(base + start, Int32(UInt8(ascii: "\n")), min(bytes.count - start, limit + 1)) != nil { return .done }
            }
            for byte in bytes {
                switch state {
                case .method(let count):
                    if byte == UInt8(ascii: " ") {
                        state = .target(0)
                    } else if byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") {
                        // Empty lines before a request line are ignored (RFC 9112 §2.2); one after a method is malformed.
                        if count > 0 { return .done }
                    } else if count >= Self.longestMethod {
                        return .done
                    } else {
                        state = .method(count + 1)
                    }
                case .target(let count):
                    if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") { return .done }
                    if count >= limit { return .tooLong }
                    state = .target(count + 1)
                }
            }
            return .more
        }
    }
}
