import Board
import Database
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization
import Vocabulary
import WeatherboardAPI

/// The live board of one instance (CONTRACT §11): its open streams, and the one reader that feeds them all.
///
/// Fan-out goes through PostgreSQL. Events are rows of `stream_events`, written by triggers in the transaction that
/// makes the change (sql/0024); a statement trigger `NOTIFY`s at commit. Each instance has one `PostgresListener`
/// session on the primary; every notification, and every (re)`LISTEN`, wakes `pump`, which reads the new rows (once,
/// for every subscriber of this instance), reads their posts and queue items once, and queues each subscriber what
/// its list shows of them, rendered once per kind of reader.
///
/// None missed, none twice. Event ids are given in commit order (sql/0024): once an id is visible, no smaller one can
/// appear. `cursor` is the last id this instance has read. A subscriber registers under the same lock that moves
/// `cursor`, so every event is either after its start (the pump queues it) or at or before it (its catch-up reads it
/// from the table): a client resuming after `L` gets (L, cursor] from the table, then live events. A client that saw
/// more on another instance (L > cursor) skips what it has seen. An id this instance cannot resume from (trimmed,
/// beyond the last event, garbage) gets `reset`.
final class StreamHub: Sendable {
    struct Settings: Sendable {
        var heartbeatSeconds = 15
        var backlogSeconds = 3600
        var bufferEvents = 256
        var maxPerClient = 8
        var max = 20_000
    }

    /// How a new stream begins.
    enum Start: Sendable {
        /// Live from `at` (sent as the stream's first id).
        case live(at: StreamPosition)
        /// Resumes: (`after`, `through`] from the table first.
        case resume(after: StreamPosition, through: StreamPosition)
        /// `Last-Event-ID` cannot be honoured: `reset`, then live from `at`.
        case reset(at: StreamPosition)
    }

    let settings: Settings
    /// For opening and resuming streams (request work, on the server's pool).
    let store: PostgresStreamStore
    let moderation: PostgresModerationStore
    /// For the pump: a small pool of its own, so the live board's background reads never take a request's connection.
    let pumpDatabase: PostgresPool
    let pumpStore: PostgresStreamStore
    let pumpModeration: PostgresModerationStore
    let logger: Logger
    private let state = Mutex(State())
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let sent = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let listener: Mutex<PostgresListener?> = Mutex(nil)

    fileprivate struct State {
        var cursor: StreamPosition?
        var subscribers: [Int: StreamSubscriber] = [:]
        /// Board streams without a region filter, board streams by their region, moderation streams: a post event
        /// visits only the streams that may show it.
        var anyRegion: [Int: StreamSubscriber] = [:]
        var regions: [Int: [Int: StreamSubscriber]] = [:]
        var moderators: [Int: StreamSubscriber] = [:]
        var perClient: [String: Int] = [:]
        var nextID = 0
        var closed = false
        var board = 0
        var moderation = 0
    }

    /// Standbys: a post leaving the public view (hidden, removed, deleted) raises their read fence (CONTRACT §12).
    let reads: ReplicaRouter?

    init(settings: Settings, database: PostgresPool, pumpDatabase: PostgresPool, reads: ReplicaRouter? = nil, logger: Logger) {
        self.pumpDatabase = pumpDatabase
        self.pumpStore = PostgresStreamStore(database: pumpDatabase)
        self.pumpModeration = PostgresModerationStore(database: pumpDatabase)
        self.settings = settings
        self.reads = reads
        self.store = PostgresStreamStore(database: database)
        self.moderation = PostgresModerationStore(database: database)
        self.logger = logger
        (wakes, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    // MARK: Subscribing

    /// Registers a stream, or throws 503 (draining, or `STREAM_MAX` open here) or 429 (`STREAM_MAX_PER_CLIENT` open
    /// from `client`).
    func subscribe(
        _ kind: StreamSubscriber.Kind, client: String, language: Language, links: MediaLinks, lastEventID: String?,
        disconnect: @escaping @Sendable () -> Void
    ) async throws -> (StreamSubscriber, Start) {
        var resumeAfter: StreamPosition?
        var resetRequested = false
        if let lastEventID {
            if let position = StreamPosition(Substring(lastEventID)), try await store.canResume(after: position) {
                resumeAfter = position
            } else {
                resetRequested = true
            }
        }
        // The viewer's blocks, read before registering (so no event of a blocked author slips through while the
        // registration settles) and again after it (a block or unblock committed in between).
        let account: Int? = if case .board(let stream) = kind { stream.viewer.accountID } else { nil }
        var blocksBefore: Set<Int> = []
        if let account { blocksBefore = try await store.blockedAuthors(of: account) }
        // The last event committed: a new stream starts there even if this instance has not read that far yet (events
        // committed before the stream opened would otherwise arrive on it as new).
        let latest = try await store.latest()
        let registered: Result<(StreamSubscriber, Start), APIError> = state.withLock { state in
            guard !state.closed else { return .failure(APIError(.serviceUnavailable, "service_unavailable", "the server is shutting down", retryAfter: 1)) }
            guard state.subscribers.count < settings.max else {
                return .failure(APIError(.serviceUnavailable, "service_unavailable", "this server has no room for another stream", retryAfter: 5))
            }
            guard state.perClient[client, default: 0] < settings.maxPerClient else {
                return .failure(APIError(.tooManyRequests, "rate_limited", "at most \(settings.maxPerClient) open streams per client", retryAfter: 5))
            }
            let cursor = state.cursor ?? latest
            state.cursor = cursor
            state.nextID += 1
            let begin: Start
            var skip: StreamPosition?
            if let after = resumeAfter {
                if after < cursor {
                    begin = .resume(after: after, through: cursor)
                } else {
                    begin = .resume(after: cursor, through: cursor)
                    skip = after
                }
            } else {
                let from = max(cursor, latest)
                if from > cursor { skip = from }
                begin = resetRequested ? .reset(at: from) : .live(at: from)
            }
            let subscriber = StreamSubscriber(
                id: state.nextID, kind: kind, client: client, language: language, links: links, limit: settings.bufferEvents, skipThrough: skip,
                disconnect: disconnect
            )
            subscriber.assumeBlocks(blocksBefore)
            state.add(subscriber)
            state.perClient[client, default: 0] += 1
            if subscriber.isModeration { state.moderation += 1 } else { state.board += 1 }
            return .success((subscriber, begin))
        }
        let (subscriber, begin) = try registered.get()
        if let account {
            do {
                subscriber.settleBlocks(try await store.blockedAuthors(of: account))
            } catch {
                unregister(subscriber)
                throw error
            }
        }
        return (subscriber, begin)
    }

    func unregister(_ subscriber: StreamSubscriber) {
        subscriber.close()
        state.withLock { state in
            guard state.remove(subscriber) else { return }
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

    /// Reads everything after the cursor and delivers it.
    func catchUp() async throws {
        guard let from = state.withLock({ $0.cursor }) else {
            let latest = try await pumpStore.latest()
            state.withLock { state in state.cursor = state.cursor ?? latest }
            return
        }
        var position = from
        while true {
            let events = try await pumpStore.events(after: position, limit: 500)
            try await deliver(events, to: nil) { subscriber, message in
                if subscriber.enqueue(message) == .dropped { self.dropped.add(1, ordering: .relaxed) }
            }
            guard events.count == 500, let last = events.last else { return }
            position = last.position
        }
    }

    /// A resuming stream's catch-up: the events in (`after`, `through`] for this subscriber alone, written in order.
    func replay(_ subscriber: StreamSubscriber, after: StreamPosition, through: StreamPosition, write: (ByteBuffer) async throws -> Void) async throws {
        var position = after
        while position < through {
            let events = try await store.events(after: position, through: through, limit: 500)
            guard let last = events.last else { return }
            var messages: [ByteBuffer] = []
            try await deliver(events, to: [subscriber]) { _, message in messages.append(message) }
            for message in messages { try await write(message) }
            position = last.position
        }
    }

    /// Renders each event for the subscribers that see it and hands each message to `send`, in order. `targets` nil:
    /// this instance's subscribers at the moment each event is reached (taken under the lock that moves the cursor).
    private func deliver(
        _ events: [StreamEvent], to targets: [StreamSubscriber]?, send: (StreamSubscriber, ByteBuffer) -> Void
    ) async throws {
        guard !events.isEmpty else { return }
        // A post that left the public view (hidden, removed, deleted) must be gone from every reader's next read, on
        // every standby: reads from now on must see the primary as it is now (past these events' commits). Only the
        // live pump does it (`targets` nil), before anyone is told.
        if targets == nil, let reads, events.contains(where: { ($0.kind == .post || $0.kind == .reply) && $0.old?.state == .visible && $0.new?.state != .visible }) {
            reads.raiseFence(to: try await reads.primaryPosition())
        }
        let postIDs = Array(Set(events.filter { $0.kind == .post || $0.kind == .reply }.compactMap(\.postID)))
        let reports = events.filter { $0.kind == .report }
        let queuedPosts = Array(Set(reports.filter { $0.replyID == nil }.compactMap(\.postID)))
        let queuedReplies = Array(Set(reports.compactMap(\.replyID)))
        let (store, moderation) = targets == nil ? (pumpStore, pumpModeration) : (self.store, self.moderation)
        let posts = try await store.posts(ids: postIDs)
        let replies = try await store.replies(ids: Array(Set(events.filter { $0.kind == .reply }.compactMap(\.replyID))))
        var items: [QueueTarget: QueueItem] = [:]
        if !queuedPosts.isEmpty || !queuedReplies.isEmpty {
            for item in try await moderation.queueItems(postIDs: queuedPosts, replyIDs: queuedReplies) {
                items[QueueTarget(post: item.post.id, reply: item.reply?.id)] = item
            }
        }
        for event in events {
            let subscribers: [StreamSubscriber] =
                targets
                ?? state.withLock { state in
                    if let cursor = state.cursor, event.position > cursor { state.cursor = event.position }
                    return state.audience(of: event)
                }
            guard !subscribers.isEmpty else { continue }
            switch event.kind {
            case .post:
                try await deliverPost(event, post: event.postID.flatMap { posts[$0] }, to: subscribers, store: store, send: send)
            case .reply:
                await deliverReply(event, reply: event.replyID.flatMap { replies[$0] }, post: event.postID.flatMap { posts[$0] }, to: subscribers, send: send)
            case .block, .unblock:
                try await deliverBlock(event, to: subscribers, store: store, send: send)
            case .report:
                guard let postID = event.postID, let item = items[QueueTarget(post: postID, reply: event.replyID)] else { continue }
                var rendered: [String: ByteBuffer] = [:]
                for subscriber in subscribers where subscriber.isModeration && subscriber.wants(event) {
                    let key = subscriber.links.cacheKey + subscriber.language.rawValue
                    let message =
                        rendered[key]
                        ?? Self.message(
                            id: event.position, event: "report",
                            QueueItemResponse(item, viewer: Viewer(accountID: nil, isModerator: true), language: subscriber.language, media: subscriber.links)
                        )
                    rendered[key] = message
                    send(subscriber, message)
                }
            case .resolved:
                guard let postID = event.postID else { continue }
                let message = Self.message(
                    id: event.position, event: "resolved",
                    QueueResolvedEvent(
                        postId: String(postID), replyId: event.replyID.map(String.init), action: event.action ?? "", moderatorId: event.moderatorID.map(String.init)
                    )
                )
                for subscriber in subscribers where subscriber.isModeration && subscriber.wants(event) { send(subscriber, message) }
            }
        }
    }

    private func deliverPost(
        _ event: StreamEvent, post: Post?, to subscribers: [StreamSubscriber], store: PostgresStreamStore, send: (StreamSubscriber, ByteBuffer) -> Void
    ) async throws {
        guard let postID = event.postID else { return }
        var shown: [(StreamSubscriber, BoardStream.Change)] = []
        var removed: ByteBuffer?
        var pacer = Pacer()
        for subscriber in subscribers {
            guard let change = subscriber.change(for: event) else { continue }
            if change == .remove || post == nil {
                let message = removed ?? Self.message(id: event.position, event: "remove", StreamRemovedEvent(id: String(postID)))
                removed = message
                send(subscriber, message)
                await pacer.tick()
            } else {
                shown.append((subscriber, change))
            }
        }
        guard let post, !shown.isEmpty else { return }
        let readers = Array(Set(shown.compactMap { $0.0.board?.viewer.accountID }))
        let helped = try await store.helpfulMarks(postID: postID, accounts: readers)
        var rendered: [RenderKey: ByteBuffer] = [:]
        for (subscriber, change) in shown {
            guard let stream = subscriber.board else { continue }
            // The post as this reader's list shows it: `isMine` and the status for its author, the real status for
            // moderators, `helpedByMe` for whoever marked it.
            let reader = stream.viewer.accountID == post.authorID ? stream.viewer : Viewer(accountID: nil, isModerator: stream.viewer.isModerator)
            let key = RenderKey(
                change: change, author: reader.accountID, moderator: reader.isModerator,
                helped: stream.viewer.accountID.map(helped.contains) ?? false, language: subscriber.language, links: subscriber.links.cacheKey
            )
            await pacer.tick()
            if let message = rendered[key] {
                send(subscriber, message)
                continue
            }
            var copy = post
            copy.helpedByMe = key.helped
            let message = Self.message(
                id: event.position, event: change.rawValue, PostResponse(copy, viewer: reader, language: subscriber.language, media: subscriber.links)
            )
            rendered[key] = message
            send(subscriber, message)
        }
    }

    /// A reply on the streams that show its post (CONTRACT §13): `reply` with the reply as this reader sees it when it
    /// appears or changes, `replyRemoved` when it leaves the reader's view (`BoardStream.replyChange`).
    private func deliverReply(
        _ event: StreamEvent, reply: Reply?, post: Post?, to subscribers: [StreamSubscriber], send: (StreamSubscriber, ByteBuffer) -> Void
    ) async {
        guard let replyID = event.replyID, let postID = event.postID else { return }
        var removed: ByteBuffer?
        var rendered: [String: ByteBuffer] = [:]
        var pacer = Pacer()
        for subscriber in subscribers {
            guard let change = subscriber.replyChange(for: event, post: post), let stream = subscriber.board else { continue }
            await pacer.tick()
            guard change != .remove, let reply else {
                let message = removed ?? Self.message(id: event.position, event: "replyRemoved", StreamReplyRemovedEvent(id: String(replyID), postId: String(postID)))
                removed = message
                send(subscriber, message)
                continue
            }
            // `isMine` and the status for its author, the real status for moderators.
            let reader = stream.viewer.accountID == reply.authorID ? stream.viewer : Viewer(accountID: nil, isModerator: stream.viewer.isModerator)
            let key = "\(reader.accountID ?? 0)-\(reader.isModerator)"
            let message = rendered[key] ?? Self.message(id: event.position, event: "reply", ReplyResponse(reply, viewer: reader))
            rendered[key] = message
            send(subscriber, message)
        }
    }

    /// A queue item's target: a post, or a reply on it.
    struct QueueTarget: Hashable {
        var post: Int
        var reply: Int?
    }

    /// A block takes the blocked author's posts out of the blocker's streams (`remove` for each the stream shows, up to
    /// a hundred; past that, `reset`); an unblock brings them back, which only a reload shows in order (`reset`).
    private func deliverBlock(
        _ event: StreamEvent, to subscribers: [StreamSubscriber], store: PostgresStreamStore, send: (StreamSubscriber, ByteBuffer) -> Void
    ) async throws {
        guard let audience = event.audience, let author = event.authorID else { return }
        let affected = subscribers.filter { $0.board?.viewer.accountID == audience && $0.wants(event) }
        guard !affected.isEmpty else { return }
        if event.kind == .unblock {
            for subscriber in affected {
                subscriber.unblock(author)
                send(subscriber, Self.message(id: event.position, event: "reset", EmptyObject()))
            }
            return
        }
        let posts = try await store.postsOf(author: author, limit: 101)
        for subscriber in affected {
            guard let stream = subscriber.board else { continue }
            // Sent even when the stream already knew of the block (it read its blocks when it opened): a client
            // resuming from before the block has not had these removes.
            subscriber.block(author)
            if posts.count > 100 {
                send(subscriber, Self.message(id: event.position, event: "reset", EmptyObject()))
                continue
            }
            let gone = posts.filter { stream.shows($0.snapshot, authorID: author, regionID: $0.regionID) }
            for (index, post) in gone.enumerated() {
                // Only the last carries the id: a client resuming after it has had them all.
                send(subscriber, Self.message(id: index == gone.count - 1 ? event.position : nil, event: "remove", StreamRemovedEvent(id: String(post.id))))
            }
        }
    }

    // MARK: Heartbeats, limits, shutdown

    /// Queues a comment to every stream with nothing waiting (`STREAM_HEARTBEAT_SECONDS`): proxies and clients see
    /// the connection alive, and a stream whose client has gone fails its write and ends.
    func heartbeat() async {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        let beat = ByteBuffer(string: ":\n\n")
        var pacer = Pacer()
        for subscriber in subscribers {
            subscriber.enqueue(beat, heartbeat: true)
            await pacer.tick()
        }
    }

    /// Spreads a burst (one event to 10,000 streams wakes 10,000 response tasks): after every 256 messages the pump
    /// yields, so work that arrived meanwhile is not queued behind the whole burst. (A 2 ms pause every 1,024 as well did
    /// not lower `/healthz`'s p99 during a fan-out: the time is in the response tasks' writes; bench/README.md.)
    struct Pacer {
        private var count = 0

        mutating func tick() async {
            count += 1
            if count % 256 == 0 { await Task.yield() }
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

    // MARK: Messages

    private struct RenderKey: Hashable {
        var change: BoardStream.Change
        var author: Int?
        var moderator: Bool
        var helped: Bool
        var language: Language
        var links: String
    }

    struct EmptyObject: JSONWritable {
        func write(to w: inout JSONWriter) { w.raw("{}") }
    }

    /// One SSE message: `id:` (when given), `event:`, and the JSON on one `data:` line (JSON escapes every line break).
    static func message(id: StreamPosition?, event: String, _ value: some JSONWritable) -> ByteBuffer {
        var writer = JSONWriter(capacity: value.jsonCapacity)
        value.write(to: &writer)
        var buffer = ByteBuffer()
        buffer.reserveCapacity(writer.bytes.count + 64)
        if let id { buffer.writeString("id: \(id)\n") }
        buffer.writeString("event: \(event)\ndata: ")
        buffer.writeBytes(writer.bytes)
        buffer.writeString("\n\n")
        return buffer
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

extension StreamHub.State {
    mutating func add(_ subscriber: StreamSubscriber) {
        subscribers[subscriber.id] = subscriber
        switch subscriber.kind {
        case .moderation: moderators[subscriber.id] = subscriber
        case .board(let stream):
            if let region = stream.regionID { regions[region, default: [:]][subscriber.id] = subscriber } else { anyRegion[subscriber.id] = subscriber }
        }
    }

    /// False if it was not registered (already removed).
    mutating func remove(_ subscriber: StreamSubscriber) -> Bool {
        guard subscribers.removeValue(forKey: subscriber.id) != nil else { return false }
        switch subscriber.kind {
        case .moderation: moderators[subscriber.id] = nil
        case .board(let stream):
            if let region = stream.regionID {
                regions[region]?[subscriber.id] = nil
                if regions[region]?.isEmpty == true { regions[region] = nil }
            } else {
                anyRegion[subscriber.id] = nil
            }
        }
        return true
    }

    /// The streams that may show `event`.
    func audience(of event: StreamEvent) -> [StreamSubscriber] {
        switch event.kind {
        case .post, .reply:
            var streams = Array(anyRegion.values)
            if let region = event.regionID, let local = regions[region] { streams.append(contentsOf: local.values) }
            return streams
        case .block, .unblock: return Array(subscribers.values)
        case .report, .resolved: return Array(moderators.values)
        }
    }
}
