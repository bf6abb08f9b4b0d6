import Synchronization
import Vocabulary

/// The live board's rules (CONTRACT §11, §13): what each committed change is to each open stream, and how it reads.
/// The transport (the server's `StreamHub`) owns sockets, bounds and heartbeats; it registers each stream here with a
/// `Sink` of its own and hands over the messages this decides.
///
/// - **What an event is.** `LiveBoardStream` says, from the event's before and after, whether a post or reply appears
///   (`post`, `reply`), changes (`update`, `reply`) or leaves (`remove`, `replyRemoved`) a stream; who sees an item is
///   `Visibility`'s to say. A block takes the blocked author's posts out of the blocker's streams (a `remove` each, up
///   to a hundred; past that `reset`); an unblock is a `reset`. Reports and decisions reach moderation streams.
/// - **Rendered once per audience class.** Streams that receive an event are grouped by reader class (anonymous,
///   member, the item's author, moderator: `LiveBoardAudience`), language and links; the renderer is called once per
///   group (and once more for the readers who marked the post helpful), and every stream of a group gets the same
///   message. Blocks choose who receives an event, not how it reads.
/// - **None missed, none twice.** Event ids are given in commit order (sql/0024): once an id is read, no smaller one can
///   appear. `cursor` is the last id read for the live streams. A stream registers under the lock that moves `cursor`,
///   so every event is either after its start (the live read decides it) or at or before it (its catch-up, `replay`,
///   reads it from the table): a client resuming after `L` gets (L, cursor] from the table, then live events. A client
///   that saw more on another instance (L > cursor) skips what it has seen. An id that cannot be resumed from (trimmed,
///   beyond the last event, garbage) starts with `reset`.
public final class LiveBoard<Renderer: LiveBoardRenderer, Sink: AnyObject & Sendable>: Sendable {
    public typealias Message = Renderer.Message

    /// What a stream follows.
    public enum Kind: Sendable, Hashable {
        case board(LiveBoardStream)
        /// The moderation queue (moderators only: the transport checks the caller).
        case moderation
    }

    /// How a new stream begins.
    public enum Start: Sendable, Equatable {
        /// Live from `at` (sent as the stream's first id).
        case live(at: StreamPosition)
        /// Resumes: (`after`, `through`] from the table first (`replay`), then live.
        case resume(after: StreamPosition, through: StreamPosition)
        /// `Last-Event-ID` cannot be honoured: `reset`, then live from `at`.
        case reset(at: StreamPosition)
    }

    /// Events read at a time.
    static var batch: Int { 500 }
    /// A block with more of the author's posts than this is a `reset`, not a `remove` each.
    static var blockRemoves: Int { 100 }

    public let renderer: Renderer
    /// For opening and resuming streams (request work).
    let store: any LiveBoardStore
    /// For the live read (`catchUp`): a connection of its own, so it never waits for a request's.
    let pumpStore: any LiveBoardStore
    let state = Mutex(State())

    public init(renderer: Renderer, store: any LiveBoardStore, pumpStore: any LiveBoardStore) {
        self.renderer = renderer
        self.store = store
        self.pumpStore = pumpStore
    }

    // MARK: Streams

    /// Registers `sink`'s stream and says how it begins. A signed-in reader's blocks are read before registering (so no
    /// event of a blocked author slips through while the registration settles) and again after it (a block or unblock
    /// committed in between).
    public func subscribe(_ sink: Sink, _ kind: Kind, language: Language, links: Renderer.Links, lastEventID: String?) async throws -> Start {
        var resumeAfter: StreamPosition?
        var resetRequested = false
        if let lastEventID {
            if let position = StreamPosition(Substring(lastEventID)), try await store.canResume(after: position) {
                resumeAfter = position
            } else {
                resetRequested = true
            }
        }
        let account = kind.account
        var blocksBefore: Set<Int> = []
        if let account { blocksBefore = try await store.blockedAuthors(of: account) }
        // The last event committed: a new stream starts there even if the live read has not reached it (events
        // committed before the stream opened would otherwise arrive on it as new).
        let latest = try await store.latest()
        let start: Start = state.withLock { state in
            let cursor = state.cursor ?? latest
            state.cursor = cursor
            let start: Start
            var skip: StreamPosition?
            if let after = resumeAfter {
                if after < cursor {
                    start = .resume(after: after, through: cursor)
                } else {
                    start = .resume(after: cursor, through: cursor)
                    skip = after
                }
            } else {
                let from = max(cursor, latest)
                if from > cursor { skip = from }
                start = resetRequested ? .reset(at: from) : .live(at: from)
            }
            state.add(Entry(sink: sink, kind: kind, language: language, links: links, blocked: blocksBefore, skipThrough: skip))
            return start
        }
        if let account {
            do {
                let blocks = try await store.blockedAuthors(of: account)
                state.withLock { $0.settleBlocks(of: ObjectIdentifier(sink), blocks) }
            } catch {
                unsubscribe(sink)
                throw error
            }
        }
        return start
    }

    public func unsubscribe(_ sink: Sink) {
        _ = state.withLock { $0.remove(ObjectIdentifier(sink)) }
    }

    /// Streams registered, by kind.
    public var counts: (board: Int, moderation: Int) {
        state.withLock { state in
            let moderation = state.buckets[.moderation]?.count ?? 0
            return (state.located.count - moderation, moderation)
        }
    }

    // MARK: Reading

    /// Reads every event after the cursor and hands each message, with the streams that receive it, to `send`, in
    /// order. The streams are those registered when each event is reached.
    public func catchUp(send: (Message, [Sink]) async throws -> Void) async throws {
        guard let from = state.withLock({ $0.cursor }) else {
            let latest = try await pumpStore.latest()
            state.withLock { state in state.cursor = state.cursor ?? latest }
            return
        }
        var position = from
        while true {
            let events = try await pumpStore.events(after: position, limit: Self.batch)
            try await deliver(events, only: nil, store: pumpStore, send: send)
            guard events.count == Self.batch, let last = events.last else { return }
            position = last.position
        }
    }

    /// A resuming stream's catch-up: what the events in (`after`, `through`] are to `sink`'s stream alone, in order.
    public func replay(_ sink: Sink, after: StreamPosition, through: StreamPosition, write: (Message) async throws -> Void) async throws {
        var position = after
        while position < through {
            let events = try await store.events(after: position, through: through, limit: Self.batch)
            guard let last = events.last else { return }
            var messages: [Message] = []
            try await deliver(events, only: ObjectIdentifier(sink), store: store) { message, _ in messages.append(message) }
            for message in messages { try await write(message) }
            position = last.position
        }
    }
}

extension LiveBoard.Kind {
    /// The signed-in reader of a board stream (whose blocks apply).
    var account: Int? {
        if case .board(let stream) = self { return stream.reader.accountID }
        return nil
    }
}
