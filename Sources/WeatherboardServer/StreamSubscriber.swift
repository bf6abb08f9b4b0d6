import NIOCore
import Synchronization

/// One open stream's transport (CONTRACT §11): the messages on their way to it. What it receives is `LiveBoard`'s to
/// decide.
///
/// A stream begins queued: the hub queues, the stream's response task writes its opening and catch-up, then what
/// waits. Then it goes direct (`goDirect`): the hub writes each message on the connection's event loop, below the HTTP
/// codec, as an HTTP/1.1 chunk framed once and shared by every stream it goes to (`StreamHub.send`), and the response
/// task only waits for the end.
///
/// Bounds: queued, at `STREAM_BUFFER_EVENTS` waiting the subscriber is dropped; direct, once the connection's outbound
/// buffer is past its high-water mark (not writable) and `STREAM_BUFFER_EVENTS` more messages are written to it. Either
/// way its connection is closed and the client resumes with `Last-Event-ID`; nothing is buffered without limit. An idle
/// stream is a suspended task: no thread.
final class StreamSubscriber: Sendable {
    let id: Int
    let isModeration: Bool
    /// The client address the per-client limit counts.
    let client: String
    let limit: Int
    private let disconnect: @Sendable () -> Void
    private let state = Mutex(State())

    private struct State {
        var queue: [ByteBuffer] = []
        var waiter: CheckedContinuation<[ByteBuffer]?, Never>?
        var closed = false
        /// Set once the response task hands the connection over.
        var direct: StreamConnection?
    }

    enum Enqueued {
        case queued, dropped, closed
        /// To be written on the connection's event loop (`StreamConnection.write`).
        case direct(StreamConnection)
    }

    init(id: Int, isModeration: Bool, client: String, limit: Int, disconnect: @escaping @Sendable () -> Void) {
        self.id = id
        self.isModeration = isModeration
        self.client = client
        self.limit = limit
        self.disconnect = disconnect
    }

    /// Queues `message`, or says where to write it once direct; past the bound the subscriber is dropped and its
    /// connection closed. A heartbeat is queued only when nothing else waits.
    @discardableResult
    func enqueue(_ message: ByteBuffer, heartbeat: Bool = false) -> Enqueued {
        let (result, waiter): (Enqueued, CheckedContinuation<[ByteBuffer]?, Never>?) = state.withLock { state in
            guard !state.closed else { return (.closed, nil) }
            if let direct = state.direct { return (.direct(direct), nil) }
            if heartbeat && !state.queue.isEmpty { return (.queued, nil) }
            guard state.queue.count < limit else {
                state.closed = true
                state.queue = []
                let waiter = state.waiter
                state.waiter = nil
                return (.dropped, waiter)
            }
            if let waiter = state.waiter {
                state.waiter = nil
                return (.queued, waiter)
            }
            state.queue.append(message)
            return (.queued, nil)
        }
        switch result {
        case .queued: waiter?.resume(returning: [message])
        case .dropped:
            waiter?.resume(returning: nil)
            disconnect()
        case .closed, .direct: break
        }
        return result
    }

    /// Everything waiting, once there is something; nil once closed. Once direct, nothing waits: it returns at the end.
    func next() async -> [ByteBuffer]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[ByteBuffer]?, Never>) in
                let ready: [ByteBuffer]?? = state.withLock { state in
                    if !state.queue.isEmpty {
                        defer { state.queue = [] }
                        return .some(state.queue)
                    }
                    if state.closed { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            close()
        }
    }

    /// Hands the stream to `connection`: what waits is written there first (scheduled on its event loop under the lock,
    /// so every later message is written after it), then every message the hub sends. The messages handed over (not
    /// counting heartbeats), or nil if the stream has ended.
    func goDirect(_ connection: StreamConnection, frame: (ByteBuffer) -> ByteBuffer) -> Int? {
        state.withLock { state in
            guard !state.closed else { return nil }
            state.direct = connection
            let waiting = state.queue.map(frame)
            let messages = state.queue.count { $0.readableBytes > 3 }
            state.queue = []
            if !waiting.isEmpty {
                let limit = self.limit
                connection.eventLoop.execute {
                    for message in waiting { _ = connection.write(message, limit: limit) }
                    connection.flush()
                }
            }
            return messages
        }
    }

    /// Drops a direct stream past its bound (on its event loop).
    func drop() {
        close()
        disconnect()
    }

    /// Ends the stream: what is waiting is dropped, the response task ends its body.
    func close() {
        let waiter: CheckedContinuation<[ByteBuffer]?, Never>? = state.withLock { state in
            state.closed = true
            state.queue = []
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}
