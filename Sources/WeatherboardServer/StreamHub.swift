import Board
import Database
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization
import Vocabulary

/// The live board's transport on one instance (CONTRACT §11): its open streams, their bounds, heartbeats and writes.
/// What each stream receives, and how it reads, is `LiveBoard`'s (`board`) to decide.
///
/// Fan-out goes through PostgreSQL. Events are rows of `stream_events`, written by triggers in the transaction that
/// makes the change (sql/0024); a statement trigger `NOTIFY`s at commit. Each instance has one `PostgresListener`
/// session on the primary; every notification, and every (re)`LISTEN`, wakes `pump`, which has the board read the new
/// rows once for every stream of this instance and sends each message to its streams.
///
/// - None missed, none twice, catch-up and `reset`: `LiveBoard` (its opening comment).
/// - Bounds: `STREAM_MAX` streams here (503 past it), `STREAM_MAX_PER_CLIENT` per client address (429), a slot taken
///   before the stream's first read and given back when it ends; `STREAM_BUFFER_EVENTS` waiting a stream
///   (`StreamSubscriber`: past it the client is disconnected and resumes with `Last-Event-ID`).
/// - Writes: a stream's response task writes its opening and catch-up; then the hub writes each message on the
///   connection's event loop (`StreamConnection`), framed as a chunk once for every stream it goes to (`send`).
/// - A comment every `STREAM_HEARTBEAT_SECONDS` (on a queued stream, only when nothing waits).
/// - SIGTERM (`shutdown`): every stream ends cleanly and new ones are refused.
final class StreamHub: Sendable {
    typealias Board = LiveBoard<StreamRenderer, StreamSubscriber>

    struct Settings: Sendable {
        var heartbeatSeconds = 15
        var backlogSeconds = 3600
        var bufferEvents = 256
        var maxPerClient = 8
        var max = 20_000
    }

    let settings: Settings
    let board: Board
    /// The pump's pool (one connection: the pump is one task), so the live board's background reads never take a
    /// request's connection; closed with the hub.
    let pumpDatabase: PostgresPool
    let logger: Logger
    private let state = Mutex(State())
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let sent = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let listener: Mutex<PostgresListener?> = Mutex(nil)

    private struct State {
        var subscribers: [Int: StreamSubscriber] = [:]
        var perClient: [String: Int] = [:]
        var nextID = 0
        var closed = false
        var board = 0
        var moderation = 0
    }

    init(settings: Settings, database: PostgresPool, pumpDatabase: PostgresPool, renderer: StreamRenderer, logger: Logger) {
        self.settings = settings
        self.pumpDatabase = pumpDatabase
        self.board = Board(renderer: renderer, store: PostgresStreamStore(database: database), pumpStore: PostgresStreamStore(database: pumpDatabase))
        self.logger = logger
        (wakes, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    // MARK: Subscribing

    /// Opens a stream, or throws 503 (draining, or `STREAM_MAX` open here) or 429 (`STREAM_MAX_PER_CLIENT` open from
    /// `client`).
    func subscribe(
        _ kind: Board.Kind, client: String, language: Language, links: MediaLinks, lastEventID: String?,
        disconnect: @escaping @Sendable () -> Void
    ) async throws -> (StreamSubscriber, Board.Start) {
        let isModeration = kind == .moderation
        let registered: Result<StreamSubscriber, APIError> = state.withLock { state in
            guard !state.closed else { return .failure(APIError(.serviceUnavailable, "service_unavailable", "the server is shutting down", retryAfter: 1)) }
            guard state.subscribers.count < settings.max else {
                return .failure(APIError(.serviceUnavailable, "service_unavailable", "this server has no room for another stream", retryAfter: 5))
            }
            guard state.perClient[client, default: 0] < settings.maxPerClient else {
                return .failure(APIError(.tooManyRequests, "rate_limited", "at most \(settings.maxPerClient) open streams per client", retryAfter: 5))
            }
            state.nextID += 1
            let subscriber = StreamSubscriber(
                id: state.nextID, isModeration: isModeration, client: client, limit: settings.bufferEvents, disconnect: disconnect
            )
            state.subscribers[subscriber.id] = subscriber
            state.perClient[client, default: 0] += 1
            if isModeration { state.moderation += 1 } else { state.board += 1 }
            return .success(subscriber)
        }
        let subscriber = try registered.get()
        do {
            let start = try await board.subscribe(subscriber, kind, language: language, links: StreamRenderer.Links(links), lastEventID: lastEventID)
            return (subscriber, start)
        } catch {
            unregister(subscriber)
            throw error
        }
    }

    func unregister(_ subscriber: StreamSubscriber) {
        subscriber.close()
        board.unsubscribe(subscriber)
        state.withLock { state in
            guard state.subscribers.removeValue(forKey: subscriber.id) != nil else { return }
            let left = state.perClient[subscriber.client, default: 1] - 1
            state.perClient[subscriber.client] = left > 0 ? left : nil
            if subscriber.isModeration { state.moderation -= 1 } else { state.board -= 1 }
        }
    }

    // MARK: Reading

    /// The listener's callback (on its own thread): wake the pump.
    @Sendable func listenerWoke(_ wake: PostgresListener.Wake) {
        self.wake.yield()
    }

    /// Reads and delivers events at every wake until cancelled; after a failed read, again after a back-off (a
    /// notification may have been its only wake).
    func pump() async {
        var iterator = wakes.makeAsyncIterator()
        var retry = 50
        while !Task.isCancelled {
            do {
                try await catchUp()
                retry = 50
            } catch {
                if Task.isCancelled { return }
                logger.warning("stream read failed", metadata: ["error": "\(error)", "retry_ms": "\(retry)"])
                try? await Task.sleep(for: .milliseconds(retry))
                retry = min(retry * 2, 5000)
                continue
            }
            guard await iterator.next() != nil else { return }
        }
    }

    /// Everything committed since the last read, sent to the streams the board says receive it.
    func catchUp() async throws {
        var pacer = Pacer()
        try await board.catchUp { message, subscribers in
            send(message, to: subscribers)
            await pacer.tick(subscribers.count)
        }
    }

    /// Hands `message` to `subscribers`: a queued stream gets it in its queue; the direct ones get it framed as a chunk
    /// (once for all of them) on their connections' event loops, one task a loop, flushed once a stream.
    func send(_ message: ByteBuffer, to subscribers: [StreamSubscriber], heartbeat: Bool = false) {
        var loops: [ObjectIdentifier: (loop: any EventLoop, streams: [(StreamSubscriber, StreamConnection)])] = [:]
        for subscriber in subscribers {
            switch subscriber.enqueue(message, heartbeat: heartbeat) {
            case .direct(let connection):
                loops[ObjectIdentifier(connection.eventLoop), default: (connection.eventLoop, [])].streams.append((subscriber, connection))
            case .dropped: dropped.add(1, ordering: .relaxed)
            case .queued, .closed: break
            }
        }
        guard !loops.isEmpty else { return }
        let chunk = Self.chunk(message)
        for (loop, streams) in loops.values {
            loop.execute {
                var written = 0
                for (subscriber, connection) in streams {
                    if connection.write(chunk, limit: subscriber.limit) {
                        written += 1
                    } else {
                        subscriber.drop()
                        self.dropped.add(1, ordering: .relaxed)
                    }
                }
                for (_, connection) in streams { connection.flush() }
                if !heartbeat { self.countSent(written) }
            }
        }
    }

    /// `message` as one HTTP/1.1 chunk.
    static func chunk(_ message: ByteBuffer) -> ByteBuffer {
        let size = String(message.readableBytes, radix: 16)
        var chunk = ByteBuffer()
        chunk.reserveCapacity(size.utf8.count + message.readableBytes + 4)
        chunk.writeString(size)
        chunk.writeStaticString("\r\n")
        chunk.writeImmutableBuffer(message)
        chunk.writeStaticString("\r\n")
        return chunk
    }

    /// A resuming stream's catch-up, written in order before its live events.
    func replay(_ subscriber: StreamSubscriber, after: StreamPosition, through: StreamPosition, write: (ByteBuffer) async throws -> Void) async throws {
        try await board.replay(subscriber, after: after, through: through, write: write)
    }

    // MARK: Heartbeats, limits, shutdown

    /// Queues a comment to every stream with nothing waiting (`STREAM_HEARTBEAT_SECONDS`): proxies and clients see
    /// the connection alive, and a stream whose client has gone fails its write and ends.
    func heartbeat() async {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        send(ByteBuffer(string: ":\n\n"), to: subscribers, heartbeat: true)
    }

    /// Spreads a burst (one event to 10,000 streams): after every 256 messages handed over, the pump yields, so work
    /// that arrived meanwhile is not queued behind the whole burst.
    struct Pacer {
        private var count = 0

        mutating func tick(_ messages: Int = 1) async {
            let before = count / 256
            count += messages
            if count / 256 > before { await Task.yield() }
        }
    }

    /// Ends every stream and refuses new ones (SIGTERM).
    func shutdown() {
        let subscribers = state.withLock { state in
            state.closed = true
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.close() }
    }

    func countSent(_ messages: Int) {
        sent.add(messages, ordering: .relaxed)
    }

    /// For `/metrics`: open streams by kind, messages written, subscribers dropped as slow, listener reconnects.
    @Sendable func collectMetrics(_ metrics: AppMetrics) {
        let (board, moderation) = state.withLock { ($0.board, $0.moderation) }
        metrics.setGauge("stream_open", dimensions: [("stream", "board")], to: Double(board))
        metrics.setGauge("stream_open", dimensions: [("stream", "moderation")], to: Double(moderation))
        metrics.setTotal("stream_events_sent_total", to: sent.load(ordering: .relaxed))
        metrics.setTotal("stream_subscribers_dropped_total", to: dropped.load(ordering: .relaxed))
        metrics.setTotal("stream_listener_reconnects_total", to: listener.withLock { $0?.reconnects ?? 0 })
    }

    func attach(_ listener: PostgresListener) {
        self.listener.withLock { $0 = listener }
    }
}

extension StreamHub.Settings {
    init(_ configuration: AppConfiguration) {
        self.init(
            heartbeatSeconds: configuration.streamHeartbeatSeconds, backlogSeconds: configuration.streamBacklogSeconds,
            bufferEvents: configuration.streamBufferEvents, maxPerClient: configuration.streamMaxPerClient, max: configuration.streamMax
        )
    }
}
