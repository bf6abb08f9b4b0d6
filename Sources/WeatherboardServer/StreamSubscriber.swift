import Board
import Hummingbird
import NIOCore
import Synchronization
import Vocabulary

/// One open stream (CONTRACT §11): what it shows, and the messages waiting to be written to it.
///
/// The hub enqueues; the stream's own response task takes everything waiting and writes it. The queue is bounded: a
/// client that does not read leaves its response task blocked in a write, its queue fills, and at
/// `STREAM_BUFFER_EVENTS` the subscriber is dropped (its connection closed, which ends that write), never buffered
/// without limit. It resumes with `Last-Event-ID`. An idle stream is a suspended task: no thread, no connection.
final class StreamSubscriber: Sendable {
    enum Kind: Sendable {
        case board(BoardStream)
        case moderation
    }

    let id: Int
    let kind: Kind
    /// The client address the per-client limit counts.
    let client: String
    let language: Language
    let links: MediaLinks
    private let limit: Int
    private let disconnect: @Sendable () -> Void
    private let state = Mutex(State())

    private struct State {
        var queue: [ByteBuffer] = []
        var waiter: CheckedContinuation<[ByteBuffer]?, Never>?
        var closed = false
        /// Authors this stream's viewer blocks (board streams of an account).
        var blocked: Set<Int> = []
        /// Events at or below it were sent by another instance before the client came here.
        var skipThrough: StreamPosition?
        /// Blocks and unblocks applied from events while the blocks read at registration were on their way
        /// (`settleBlocks` applies them again over that read, so neither can undo the other).
        var blockChanges: [(author: Int, blocked: Bool)]? = []
    }

    enum Enqueued {
        case queued, dropped, closed
    }

    init(id: Int, kind: Kind, client: String, language: Language, links: MediaLinks, limit: Int, skipThrough: StreamPosition?, disconnect: @escaping @Sendable () -> Void) {
        self.id = id
        self.kind = kind
        self.client = client
        self.language = language
        self.links = links
        self.limit = limit
        self.disconnect = disconnect
        state.withLock { $0.skipThrough = skipThrough }
    }

    var board: BoardStream? {
        if case .board(let stream) = kind { return stream }
        return nil
    }

    var isModeration: Bool {
        if case .moderation = kind { return true }
        return false
    }

    /// The board change `event` makes to this stream (nil for none, for an event already sent, or for a moderation stream).
    func change(for event: StreamEvent) -> BoardStream.Change? {
        guard let board else { return nil }
        return state.withLock { state in
            if let skip = state.skipThrough, event.position <= skip { return nil }
            return board.change(for: event, blocked: state.blocked)
        }
    }

    /// What a `reply` event is to this stream, with its post as it is now (`BoardStream.replyChange`).
    func replyChange(for event: StreamEvent, post: Post?) -> BoardStream.Change? {
        guard let board else { return nil }
        return state.withLock { state in
            if let skip = state.skipThrough, event.position <= skip { return nil }
            return board.replyChange(for: event, post: post, blocked: state.blocked)
        }
    }

    /// Whether this stream should see `event` at all (false for one another instance already sent).
    func wants(_ event: StreamEvent) -> Bool {
        state.withLock { state in state.skipThrough.map { event.position > $0 } ?? true }
    }

    func block(_ author: Int) {
        state.withLock { state in
            state.blocked.insert(author)
            state.blockChanges?.append((author, true))
        }
    }

    func unblock(_ author: Int) {
        state.withLock { state in
            state.blocked.remove(author)
            state.blockChanges?.append((author, false))
        }
    }

    /// The blocks read before registering: in force until `settleBlocks`.
    func assumeBlocks(_ authors: Set<Int>) { state.withLock { $0.blocked = authors } }

    /// The blocks read after registering, with whatever block events were applied since replayed over them.
    func settleBlocks(_ authors: Set<Int>) {
        state.withLock { state in
            var blocked = authors
            for change in state.blockChanges ?? [] {
                if change.blocked { blocked.insert(change.author) } else { blocked.remove(change.author) }
            }
            state.blocked = blocked
            state.blockChanges = nil
        }
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
