import CLibPQ
import Synchronization

/// libpq's cancel object for one connection (`PQgetCancel`): another thread uses it to interrupt the
/// statement the connection is running (`PQcancel` sends a cancel request on a connection of its own).
///
/// The mutex keeps `PQcancel` and `PQfreeCancel` apart: once the connection is closed, `cancel` does nothing.
final class PostgresCancelHandle: Sendable {
    /// The `PGcancel *`, as its address: it shares nothing with the connection, so it may cross threads
    /// (the compiler cannot know that of an `OpaquePointer`).
    private let cancel: Mutex<UInt>

    init?(connection: OpaquePointer) {
        guard let cancel = PQgetCancel(connection) else { return nil }
        self.cancel = Mutex(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(cancel))))
    }

    deinit {
        free()
    }

    /// Asks the server to cancel whatever the connection is running. Blocks until the server has taken the
    /// request (libpq waits for it to close the cancel connection), so a statement sent after this returns
    /// cannot be hit by it. Returns false when the request could not be sent.
    @discardableResult
    func send() -> Bool {
        cancel.withLock { address in
            guard let cancel = OpaquePointer(bitPattern: address) else { return false }
            var message = [CChar](repeating: 0, count: 256)
            return PQcancel(cancel, &message, Int32(message.count)) == 1
        }
    }

    /// Releases the cancel object; later calls to `send` do nothing.
    func free() {
        cancel.withLock { address in
            if let cancel = OpaquePointer(bitPattern: address) {
                PQfreeCancel(cancel)
                address = 0
            }
        }
    }
}
