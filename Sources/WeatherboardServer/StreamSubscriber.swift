import Hummingbird
import NIOCore
import Synchronization

/// One open stream's transport (CONTRACT §11): the messages waiting to be written to it. What it receives is
/// `LiveBoard`'s to decide.
///
/// The hub enqueues; the stream's own response task takes everything waiting and writes it. The queue is bounded: a
/// client that does not read leaves its response task blocked in a write, its queue fills, and at
/// `STREAM_BUFFER_EVENTS` the subscriber is dropped (its connection closed, which ends that write), never buffered
/// without limit. It resumes with `Last-Event-ID`. An idle stream is a suspended task: no thread, no connection.
final class StreamSubscriber: Sendable {
    let id: Int
    let isModeration: Bool
    /// The client address the per-client limit counts.
    let client: String
    private let limit: Int
    private let disconnect: @Sendable () -> Void
    private let state = Mutex(State())

    private struct State {
        var queue: [ByteBuffer] = []
        var waiter: CheckedContinuation<[ByteBuffer]?, Never>?
        var closed = false
    }

    enum Enqueued {
        case queued, dropped, closed
    }

    init(id: Int, isModeration: Bool, client: String, limit: Int, disconnect: @escaping @Sendable () -> Void) {
        self.id = id
        self.isModeration = isModeration
        self.client = client
        self.limit = limit
        self.disconnect = disconnect
    }

    /// Queues `message`; past the bound the subscriber is dropped and its connection closed. A heartbeat is queued only
    /// when nothing else waits (anything waiting shows the connection is alive).
    @discardableResult
    func enqueue(_ message: ByteBuffer, heartbeat: Bool = false) -> Enqueued {
        let (result, waiter): (Enqueued, CheckedContinuation<[ByteBuffer]?, Never>?) = state.withLock { state in
            guard !state.closed else { return (.closed, nil) }
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
        case .closed: break
        }
        return result
    }

    /// Everything waiting, once there is something; nil once closed.
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
