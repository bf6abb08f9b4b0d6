import Vocabulary

extension LiveBoard {
    /// The streams that get one rendering of an event: what it is to them, and how it reads (nil: the same for every
    /// reader, as a `remove`).
    struct Group: Hashable {
        var change: LiveBoardStream.Change
        var audience: LiveBoardAudience?
        var links: Renderer.Links?
    }

    struct Recipient {
        var sink: Sink
        /// The signed-in reader (for `helpedByMe`).
        var account: Int?
    }

    /// Decides and renders `events`, and hands each message with its streams to `send`, in event order. `only`: one
    /// stream's catch-up; nil: the live read, which moves the cursor past each event as it decides it.
    func deliver(
        _ events: [StreamEvent], only: ObjectIdentifier?, store: any LiveBoardStore, send: (Message, [Sink]) async throws -> Void
    ) async throws {
        guard !events.isEmpty else { return }
        // What the events are about, read once for the batch and every stream.
        let postIDs = Set(events.filter { $0.kind == .post || $0.kind == .reply }.compactMap(\.postID))
        let replyIDs = Set(events.filter { $0.kind == .reply }.compactMap(\.replyID))
        let reports = events.filter { $0.kind == .report }
        let queuedPosts = Set(reports.filter { $0.replyID == nil }.compactMap(\.postID))
        let queuedReplies = Set(reports.compactMap(\.replyID))
        let posts = try await store.posts(ids: Array(postIDs))
        let replies = try await store.replies(ids: Array(replyIDs))
        var items: [QueueTarget: QueueItem] = [:]
        if !queuedPosts.isEmpty || !queuedReplies.isEmpty {
            for item in try await store.queueItems(postIDs: Array(queuedPosts), replyIDs: Array(queuedReplies)) {
                items[QueueTarget(post: item.post.id, reply: item.reply?.id)] = item
            }
        }
        for event in events {
            let post = event.postID.flatMap { posts[$0] }
            switch event.kind {
            case .post, .reply, .report, .resolved:
                let groups = state.withLock { state in
                    if only == nil, let cursor = state.cursor, event.position > cursor { state.cursor = event.position }
                    return state.groups(of: event, post: post, only: only)
                }
                guard !groups.isEmpty else { continue }
                try await render(
                    event, groups: groups, post: post, reply: event.replyID.flatMap { replies[$0] },
                    item: event.postID.flatMap { items[QueueTarget(post: $0, reply: event.replyID)] }, store: store, send: send
                )
            case .block, .unblock:
                let affected = state.withLock { state -> [Entry] in
                    if only == nil, let cursor = state.cursor, event.position > cursor { state.cursor = event.position }
                    guard let account = event.audience, let author = event.authorID else { return [] }
                    return state.block(author, by: account, event.kind == .block, event: event, only: only)
                }
                guard !affected.isEmpty, let author = event.authorID else { continue }
                try await deliverBlock(event, author: author, to: affected, store: store, send: send)
            }
        }
    }

    /// Renders each group once and sends it.
    private func render(
        _ event: StreamEvent, groups: [Group: [Recipient]], post: Post?, reply: Reply?, item: QueueItem?, store: any LiveBoardStore,
        send: (Message, [Sink]) async throws -> Void
    ) async throws {
        switch event.kind {
        case .post:
            guard let postID = event.postID else { return }
            // `helpedByMe` for the signed-in readers who marked the post: one read for every stream, one more rendering
            // per group that has such a reader.
            var helped: Set<Int> = []
            if let post {
                let accounts = Set(groups.filter { $0.key.audience != nil }.values.joined().compactMap(\.account))
                if !accounts.isEmpty { helped = try await store.helpfulMarks(postID: post.id, accounts: Array(accounts)) }
            }
            for (group, recipients) in groups {
                guard let post, let audience = group.audience, group.change != .remove else {
                    try await send(renderer.render(.removed(postID: postID), id: event.position, for: nil, links: nil), recipients.map(\.sink))
                    continue
                }
                let marked = helped.isEmpty ? [] : recipients.filter { $0.account.map(helped.contains) ?? false }
                let others = marked.isEmpty ? recipients : recipients.filter { !($0.account.map(helped.contains) ?? false) }
                for (helpedByMe, readers) in [(false, others), (true, marked)] where !readers.isEmpty {
                    var copy = post
                    copy.helpedByMe = helpedByMe
                    try await send(renderer.render(.post(copy, group.change), id: event.position, for: audience, links: group.links), readers.map(\.sink))
                }
            }
        case .reply:
            guard let replyID = event.replyID, let postID = event.postID else { return }
            for (group, recipients) in groups {
                let content: LiveBoardContent =
                    if let reply, group.audience != nil, group.change != .remove { .reply(reply) } else { .replyRemoved(replyID: replyID, postID: postID) }
                try await send(renderer.render(content, id: event.position, for: group.audience, links: group.links), recipients.map(\.sink))
            }
        case .report:
            guard let item else { return }
            for (group, recipients) in groups {
                try await send(renderer.render(.report(item), id: event.position, for: group.audience, links: group.links), recipients.map(\.sink))
            }
        case .resolved:
            guard let postID = event.postID else { return }
            let content = LiveBoardContent.resolved(postID: postID, replyID: event.replyID, action: event.action ?? "", moderatorID: event.moderatorID)
            for (group, recipients) in groups {
                try await send(renderer.render(content, id: event.position, for: group.audience, links: group.links), recipients.map(\.sink))
            }
        case .block, .unblock:
            return
        }
    }

    /// A block takes the blocked author's posts out of the blocker's streams (`remove` for each the stream shows, up to
    /// `blockRemoves`; past that, `reset`); an unblock brings them back, which only a reload shows in order (`reset`).
    /// Sent even when the stream already knew of the block (it read its blocks when it opened): a client resuming from
    /// before the block has not had these removes.
    private func deliverBlock(
        _ event: StreamEvent, author: Int, to affected: [Entry], store: any LiveBoardStore, send: (Message, [Sink]) async throws -> Void
    ) async throws {
        let reset = renderer.render(.reset, id: event.position, for: nil, links: nil)
        guard event.kind == .block else {
            try await send(reset, affected.map(\.sink))
            return
        }
        let posts = try await store.postsOf(author: author, limit: Self.blockRemoves + 1)
        for entry in affected {
            guard case .board(let stream) = entry.kind else { continue }
            if posts.count > Self.blockRemoves {
                try await send(reset, [entry.sink])
                continue
            }
            let gone = posts.filter { stream.shows($0.snapshot, authorID: author, regionID: $0.regionID) }
            for (index, post) in gone.enumerated() {
                // Only the last carries the id: a client resuming after it has had them all.
                let id = index == gone.count - 1 ? event.position : nil
                try await send(renderer.render(.removed(postID: post.id), id: id, for: nil, links: nil), [entry.sink])
            }
        }
    }

    /// A queue item's target: a post, or a reply on it.
    struct QueueTarget: Hashable {
        var post: Int
        var reply: Int?
    }
}

extension LiveBoard.State {
    /// The streams `event` (a post, reply, report or resolved event) reaches, grouped by what it is to them and how it
    /// reads: the decision is each stream's (`LiveBoardStream`, `Visibility`, its blocks); the grouping is what lets
    /// one rendering serve them all.
    func groups(of event: StreamEvent, post: Post?, only: ObjectIdentifier?) -> [LiveBoard.Group: [LiveBoard.Recipient]] {
        var groups: [LiveBoard.Group: [LiveBoard.Recipient]] = [:]
        forEachCandidate(of: event, only: only) { entry in
            guard entry.wants(event) else { return }
            switch (event.kind, entry.kind) {
            case (.post, .board(let stream)):
                guard let change = stream.change(for: event, blocked: entry.blocked) else { return }
                let group =
                    change == .remove || post == nil
                    ? LiveBoard.Group(change: .remove, audience: nil, links: nil)
                    : LiveBoard.Group(
                        change: change, audience: LiveBoardAudience(reader: stream.readerClass(author: event.authorID), language: entry.language), links: entry.links
                    )
                groups[group, default: []].append(LiveBoard.Recipient(sink: entry.sink, account: stream.reader.accountID))
            case (.reply, .board(let stream)):
                guard let change = stream.replyChange(for: event, post: post, blocked: entry.blocked) else { return }
                // `post` and `update` of a reply both read as `reply`.
                let group =
                    change == .remove
                    ? LiveBoard.Group(change: .remove, audience: nil, links: nil)
                    : LiveBoard.Group(
                        change: .update, audience: LiveBoardAudience(reader: stream.readerClass(author: event.authorID), language: entry.language), links: entry.links
                    )
                groups[group, default: []].append(LiveBoard.Recipient(sink: entry.sink, account: stream.reader.accountID))
            case (.report, .moderation):
                let group = LiveBoard.Group(change: .post, audience: LiveBoardAudience(reader: .moderator, language: entry.language), links: entry.links)
                groups[group, default: []].append(LiveBoard.Recipient(sink: entry.sink, account: nil))
            case (.resolved, .moderation):
                groups[LiveBoard.Group(change: .post, audience: nil, links: nil), default: []].append(LiveBoard.Recipient(sink: entry.sink, account: nil))
            default:
                return
            }
        }
        return groups
    }
}
