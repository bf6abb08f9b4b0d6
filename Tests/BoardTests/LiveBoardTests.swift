import Board
import Testing
import Vocabulary

/// Who receives each event and how often it is rendered, through `LiveBoard` on a board in memory (no server).
@Suite("LiveBoard: receivers and renderings")
struct LiveBoardTests {
    let store = MemoryBoard()
    let renderer = RecordingRenderer()
    var board: TestBoard { TestBoard(renderer: renderer, store: store, pumpStore: store) }

    func open(_ board: TestBoard, _ name: String, _ reader: Visibility, language: Language = .ko, links: String = "a", region: Int? = nil, lastEventID: String? = nil) async throws -> (Inbox, TestBoard.Start) {
        let inbox = Inbox(name)
        let start = try await board.subscribe(inbox, .board(LiveBoardStream(reader: reader, regionID: region)), language: language, links: links, lastEventID: lastEventID)
        return (inbox, start)
    }

    @Test("a post is rendered once per audience class, however many streams receive it; blocks choose receivers, not renderings")
    func renderedOncePerClass() async throws {
        let board = self.board
        store.data.withLock { $0.blocks = [5: [1], 6: [77]] }
        var anonymous: [Inbox] = []
        for n in 0..<100 { anonymous.append(try await open(board, "anonymous\(n)", .anonymous).0) }
        let members = [try await open(board, "member4", Visibility(.member(4))).0, try await open(board, "member6 (blocks 77)", Visibility(.member(6))).0]
        let author = try await open(board, "author", Visibility(.member(1))).0
        let blocker = try await open(board, "member5 (blocks 1)", Visibility(.member(5))).0
        let moderator = try await open(board, "moderator", Visibility(.moderator(9))).0
        let english = try await open(board, "member7 en", Visibility(.member(7)), language: .en).0
        let otherLinks = try await open(board, "anonymous b", .anonymous, links: "b").0
        let otherRegion = try await open(board, "anonymous region 11", .anonymous, region: 11).0

        let post = Fixture.post(100, author: 1)
        store.data.withLock { $0.posts[100] = post }
        store.add(Fixture.postEvent(1, old: nil, new: post))
        try await board.pump()

        // anonymous/ko/a, member/ko/a, author, moderator, member/en, anonymous/ko/b: six renderings for 106 streams.
        #expect(renderer.renderings.load(ordering: .relaxed) == 6)
        for inbox in anonymous { #expect(inbox.messages.map(\.description) == ["1 post 100 anonymous"]) }
        for inbox in members { #expect(inbox.messages.map(\.description) == ["1 post 100 member"]) }
        #expect(author.messages.first?.reader == .author(moderator: false))
        #expect(moderator.messages.first?.reader == .moderator)
        #expect(english.messages.first?.language == .en)
        #expect(otherLinks.messages.first?.links == "b")
        #expect(blocker.messages.isEmpty)
        #expect(otherRegion.messages.isEmpty)
    }

    @Test("a held post: its author and moderators get it, as the author's own and with its status; removal, restore, deletion")
    func heldRemovedRestoredDeleted() async throws {
        let board = self.board
        let anonymous = try await open(board, "anonymous", .anonymous).0
        let member = try await open(board, "member", Visibility(.member(4))).0
        let author = try await open(board, "author", Visibility(.member(1))).0
        let moderator = try await open(board, "moderator", Visibility(.moderator(9))).0
        let held = Fixture.post(100, author: 1, state: .filtered)
        let visible = Fixture.post(100, author: 1)
        let removed = Fixture.post(100, author: 1, state: .removed)
        let deleted = Fixture.post(100, author: 1, state: .deleted)
        store.data.withLock { $0.posts[100] = visible }
        store.add(Fixture.postEvent(1, old: nil, new: held))
        store.add(Fixture.postEvent(2, old: held, new: visible))
        store.add(Fixture.postEvent(3, old: visible, new: removed))
        store.add(Fixture.postEvent(4, old: removed, new: visible))
        store.add(Fixture.postEvent(5, old: visible, new: deleted))
        try await board.pump()
        #expect(anonymous.events == ["post", "remove", "post", "remove"])
        #expect(member.events == ["post", "remove", "post", "remove"])
        #expect(author.events == ["post", "update", "update", "update", "remove"])
        #expect(author.messages.dropLast().allSatisfy { $0.reader == .author(moderator: false) })
        #expect(moderator.events == ["post", "update", "update", "update", "remove"])
        #expect(moderator.messages.dropLast().allSatisfy { $0.reader == .moderator })
        // One `remove` rendering serves every stream it goes to.
        #expect(anonymous.messages[1].id == StreamPosition(3) && member.messages[1].id == StreamPosition(3))
    }

    @Test("replies: on the streams that show their post, rendered once per class")
    func replies() async throws {
        let board = self.board
        store.data.withLock { $0.blocks = [5: [1]] }
        let anonymous = [try await open(board, "anonymous1", .anonymous).0, try await open(board, "anonymous2", .anonymous).0]
        let replier = try await open(board, "replier", Visibility(.member(2))).0
        let blocksPostAuthor = try await open(board, "blocks 1", Visibility(.member(5))).0
        store.data.withLock { data in
            data.posts[100] = Fixture.post(100, author: 1)
            data.replies[200] = Reply(id: 200, postID: 100, postAuthorID: 1, authorID: 2, authorDisplayName: "r", body: "hi", status: .visible, createdAt: Fixture.now, updatedAt: Fixture.now)
        }
        let visible = StreamEvent.Snapshot(state: .visible, weatherType: "rain", category: "food")
        let removed = StreamEvent.Snapshot(state: .removed, weatherType: "rain", category: "food")
        store.add(StreamEvent(position: StreamPosition(1), kind: .reply, postID: 100, authorID: 2, regionID: 10, new: visible, replyID: 200))
        store.add(StreamEvent(position: StreamPosition(2), kind: .reply, postID: 100, authorID: 2, regionID: 10, old: visible, new: removed, replyID: 200))
        try await board.pump()
        // reply: anonymous, author; replyRemoved (anonymous) and reply (the author's own, still shown to them).
        #expect(renderer.renderings.load(ordering: .relaxed) == 4)
        for inbox in anonymous { #expect(inbox.events == ["reply", "replyRemoved"]) }
        #expect(replier.events == ["reply", "reply"])
        #expect(replier.messages.allSatisfy { $0.reader == .author(moderator: false) })
        #expect(blocksPostAuthor.events.isEmpty)
    }

    @Test("catch-up: a client resuming gets what it missed once, from the table, then live events; an id it cannot resume from gets reset")
    func catchUp() async throws {
        let board = self.board
        let post = Fixture.post(100, author: 1)
        store.data.withLock { $0.posts[100] = post }
        for position in 1...3 { store.add(Fixture.postEvent(Int64(position), old: position == 1 ? nil : post, new: post)) }
        let live = try await open(board, "live", .anonymous)
        #expect(live.1 == .live(at: StreamPosition(3)))
        let (resumed, start) = try await open(board, "resumed", .anonymous, lastEventID: "1")
        #expect(start == .resume(after: StreamPosition(1), through: StreamPosition(3)))
        var replayed: [RecordingRenderer.Message] = []
        try await board.replay(resumed, after: StreamPosition(1), through: StreamPosition(3)) { replayed.append($0) }
        #expect(replayed.map(\.description) == ["2 update 100 anonymous", "3 update 100 anonymous"])
        store.add(Fixture.postEvent(4, old: post, new: post))
        try await board.pump()
        #expect(live.0.messages.map(\.description) == ["4 update 100 anonymous"])
        #expect(resumed.messages.map(\.description) == ["4 update 100 anonymous"])
        let (_, forged) = try await open(board, "forged", .anonymous, lastEventID: "99")
        #expect(forged == .reset(at: StreamPosition(4)))
        let (_, garbage) = try await open(board, "garbage", .anonymous, lastEventID: "+4")
        #expect(garbage == .reset(at: StreamPosition(4)))
    }

    @Test("a block removes the author's posts from the blocker's streams (the last remove carries the id) and keeps new ones out; an unblock resets")
    func blocks() async throws {
        let board = self.board
        let blocker = try await open(board, "blocker", Visibility(.member(5))).0
        let other = try await open(board, "other", Visibility(.member(6))).0
        store.data.withLock { data in
            data.posts[100] = Fixture.post(100, author: 1)
            data.posts[101] = Fixture.post(101, author: 1)
            data.posts[102] = Fixture.post(102, author: 1, state: .removed)
        }
        store.add(StreamEvent(position: StreamPosition(1), kind: .block, authorID: 1, audience: 5))
        let next = Fixture.post(103, author: 1)
        store.data.withLock { $0.posts[103] = next }
        store.add(Fixture.postEvent(2, old: nil, new: next))
        store.add(StreamEvent(position: StreamPosition(3), kind: .unblock, authorID: 1, audience: 5))
        try await board.pump()
        // Read when the block is delivered: 103 is already there; 102 (removed) was in no stream of the blocker.
        #expect(blocker.messages.map(\.description) == ["remove 103 -", "remove 101 -", "1 remove 100 -", "3 reset 0 -"])
        #expect(other.messages.map(\.description) == ["2 post 103 member"])
    }

    @Test("helpedByMe: the readers who marked the post get their own rendering, the others share theirs")
    func helped() async throws {
        let board = self.board
        let marked = try await open(board, "marked", Visibility(.member(4))).0
        let others = [try await open(board, "other6", Visibility(.member(6))).0, try await open(board, "other7", Visibility(.member(7))).0]
        let post = Fixture.post(100, author: 1, helpful: 1)
        store.data.withLock { data in
            data.posts[100] = post
            data.helpful[100] = [4]
        }
        store.add(Fixture.postEvent(1, old: post, new: post))
        try await board.pump()
        #expect(renderer.renderings.load(ordering: .relaxed) == 2)
        #expect(marked.messages.map(\.helpedByMe) == [true])
        for inbox in others { #expect(inbox.messages.map(\.helpedByMe) == [false]) }
    }

    @Test("moderation streams get reports and decisions, board streams don't")
    func moderation() async throws {
        let board = self.board
        let queue = Inbox("queue")
        _ = try await board.subscribe(queue, .moderation, language: .ko, links: "m", lastEventID: nil)
        let reader = try await open(board, "moderator's board", Visibility(.moderator(9))).0
        store.data.withLock { $0.posts[100] = Fixture.post(100, author: 1) }
        store.add(StreamEvent(position: StreamPosition(1), kind: .report, postID: 100))
        store.add(StreamEvent(position: StreamPosition(2), kind: .resolved, postID: 100, action: "dismiss", moderatorID: 9))
        try await board.pump()
        #expect(queue.messages.map(\.description) == ["1 report 100 moderator", "2 resolved 100 -"])
        #expect(reader.messages.isEmpty)
        board.unsubscribe(queue)
        store.add(StreamEvent(position: StreamPosition(3), kind: .report, postID: 100))
        try await board.pump()
        #expect(queue.messages.count == 2)
    }
}
