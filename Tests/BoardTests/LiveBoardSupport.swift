import Board
import Foundation
import Synchronization
import Vocabulary

/// A board in memory: the events, posts, replies and blocks a `LiveBoard` reads.
final class MemoryBoard: LiveBoardStore {
    struct Contents {
        var events: [StreamEvent] = []
        var posts: [Int: Post] = [:]
        var replies: [Int: Reply] = [:]
        var blocks: [Int: Set<Int>] = [:]
        var helpful: [Int: Set<Int>] = [:]
        var trimmedThrough: Int64 = 0
    }

    let data = Mutex(Contents())

    func add(_ event: StreamEvent) {
        data.withLock { $0.events.append(event) }
    }

    func events(after position: StreamPosition, limit: Int) async throws -> [StreamEvent] {
        data.withLock { Array($0.events.filter { $0.position > position }.prefix(limit)) }
    }

    func events(after: StreamPosition, through: StreamPosition, limit: Int) async throws -> [StreamEvent] {
        data.withLock { Array($0.events.filter { $0.position > after && $0.position <= through }.prefix(limit)) }
    }

    func canResume(after position: StreamPosition) async throws -> Bool {
        data.withLock { position.id >= $0.trimmedThrough && position.id <= ($0.events.last?.position.id ?? $0.trimmedThrough) }
    }

    func latest() async throws -> StreamPosition {
        data.withLock { $0.events.last?.position ?? StreamPosition($0.trimmedThrough) }
    }

    func posts(ids: [Int]) async throws -> [Int: Post] {
        data.withLock { data in data.posts.filter { ids.contains($0.key) } }
    }

    func replies(ids: [Int]) async throws -> [Int: Reply] {
        data.withLock { data in data.replies.filter { ids.contains($0.key) } }
    }

    func queueItems(postIDs: [Int], replyIDs: [Int]) async throws -> [QueueItem] {
        data.withLock { data in
            postIDs.compactMap { data.posts[$0] }.map { QueueItem(post: $0, revisions: [], reports: [], firstReportedAt: Date(timeIntervalSince1970: 0), firstReportID: $0.id) }
        }
    }

    func helpfulMarks(postID: Int, accounts: [Int]) async throws -> Set<Int> {
        data.withLock { ($0.helpful[postID] ?? []).intersection(accounts) }
    }

    func blockedAuthors(of accountID: Int) async throws -> Set<Int> {
        data.withLock { $0.blocks[accountID] ?? [] }
    }

    func postsOf(author: Int, limit: Int) async throws -> [(id: Int, regionID: Int, snapshot: StreamEvent.Snapshot)] {
        data.withLock { data in
            data.posts.values.filter { $0.authorID == author && !$0.deleted }.sorted { $0.id > $1.id }.prefix(limit).map { post in
                (post.id, post.region.id, StreamEvent.Snapshot(state: state(post), weatherType: post.weatherType.rawValue, category: post.category.rawValue))
            }
        }
    }

    func state(_ post: Post) -> ContentState {
        ContentState(status: post.status, hiddenReason: post.hiddenReason, deleted: post.deleted)
    }
}

/// Records every rendering: what was rendered, for which audience, so a test counts renderings as well as messages.
final class RecordingRenderer: LiveBoardRenderer {
    typealias Links = String

    /// A message as a stream receives it.
    struct Message: Sendable, Equatable, CustomStringConvertible {
        var id: StreamPosition?
        var event: String
        var itemID: Int
        var reader: LiveBoardAudience.Reader?
        var language: Language?
        var links: String?
        var helpedByMe: Bool = false

        var description: String { "\(id.map { "\($0) " } ?? "")\(event) \(itemID) \(reader.map { "\($0)" } ?? "-")" }
    }

    let renderings = Atomic<Int>(0)

    func render(_ content: LiveBoardContent, id: StreamPosition?, for audience: LiveBoardAudience?, links: String?) -> Message {
        renderings.add(1, ordering: .relaxed)
        let (event, item, helped): (String, Int, Bool) =
            switch content {
            case .post(let post, let change): (change.rawValue, post.id, post.helpedByMe)
            case .removed(let postID): ("remove", postID, false)
            case .reply(let reply): ("reply", reply.id, false)
            case .replyRemoved(let replyID, _): ("replyRemoved", replyID, false)
            case .report(let item): ("report", item.post.id, false)
            case .resolved(let postID, _, _, _): ("resolved", postID, false)
            case .reset: ("reset", 0, false)
            }
        return Message(id: id, event: event, itemID: item, reader: audience?.reader, language: audience?.language, links: links, helpedByMe: helped)
    }
}

/// A stream's end in the tests: the messages it was handed, in order.
final class Inbox: Sendable {
    let name: String
    private let received = Mutex<[RecordingRenderer.Message]>([])

    init(_ name: String) {
        self.name = name
    }

    func take(_ message: RecordingRenderer.Message) {
        received.withLock { $0.append(message) }
    }

    var messages: [RecordingRenderer.Message] { received.withLock { $0 } }
    var events: [String] { messages.map(\.event) }
}

typealias TestBoard = LiveBoard<RecordingRenderer, Inbox>

extension TestBoard {
    /// The live read, each message handed to its streams.
    func pump() async throws {
        try await catchUp { message, inboxes in
            for inbox in inboxes { inbox.take(message) }
        }
    }
}

enum Fixture {
    static let now = Date(timeIntervalSince1970: 0)

    static func post(_ id: Int, author: Int, state: ContentState = .visible, region: Int = 10, weather: WeatherType = .rain, helpful: Int = 0) -> Post {
        let (status, reason, deleted): (PostStatus, String?, Bool) =
            switch state {
            case .visible: (.visible, nil, false)
            case .filtered: (.hidden, "filter", false)
            case .hidden: (.hidden, "reports", false)
            case .removed: (.removed, nil, false)
            case .deleted: (.visible, nil, true)
            }
        return Post(
            id: id, authorID: author, authorDisplayName: "a\(author)", region: RegionSummary(id: region, nameEnglish: "r", nameKorean: nil, countryCode: "KR"),
            weatherType: weather, category: .food, title: nil, body: "b", status: status, hiddenReason: reason, deleted: deleted, createdAt: now, updatedAt: now,
            edited: false, helpfulCount: helpful
        )
    }

    static func snapshot(_ post: Post) -> StreamEvent.Snapshot {
        StreamEvent.Snapshot(
            state: ContentState(status: post.status, hiddenReason: post.hiddenReason, deleted: post.deleted), weatherType: post.weatherType.rawValue,
            category: post.category.rawValue
        )
    }

    /// A post event taking `old` to `new` (nil `old`: created).
    static func postEvent(_ position: Int64, old: Post?, new: Post) -> StreamEvent {
        StreamEvent(
            position: StreamPosition(position), kind: .post, postID: new.id, authorID: new.authorID, regionID: new.region.id, old: old.map(snapshot),
            new: snapshot(new)
        )
    }
}
