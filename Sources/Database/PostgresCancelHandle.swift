import CLibPQ

/// libpq's cancel object for one connection (`PQgetCancel`): the pool's cancel thread uses it to interrupt the
/// statement the connection is running (`PQcancel` sends a cancel request on a connection of its own).
///
/// It shares nothing with the connection, so it outlives it: a request still on its way when the connection
/// closes keeps the object alive, and the last holder frees it.
final class PostgresCancelHandle: Sendable {
    /// The `PGcancel *`, as its address (the compiler cannot know that an `OpaquePointer` may cross threads).
    private let address: UInt

    init?(connection: OpaquePointer) {
        guard let cancel = PQgetCancel(connection) else { return nil }
        self.address = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(cancel)))
    }

    deinit {
        if let cancel = OpaquePointer(bitPattern: address) { PQfreeCancel(cancel) }
    }

    /// Asks the server to cancel whatever the connection is running. Blocks until the server has taken the
    /// request (libpq waits for it to close the cancel connection), with no time limit of its own: only the
    /// pool's cancel thread calls it (`PostgresCanceller`). Returns false when the request could not be sent.
    func send() -> Bool {
        guard let cancel = OpaquePointer(bitPattern: address) else { return false }
        var message = [CChar](repeating: 0, count: 256)
        return PQcancel(cancel, &message, Int32(message.count)) == 1
    }
}
