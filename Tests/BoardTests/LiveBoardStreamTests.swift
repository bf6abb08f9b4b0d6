import Board
import Foundation
import Testing
import Vocabulary

/// What each post and reply event is to each kind of reader's stream (CONTRACT §1, §11, §13), decided without a server.
@Suite("LiveBoardStream: events × readers × filters")
struct LiveBoardStreamTests {
    /// The post's author is 1; a reply's author is 2.
    static let postAuthor = 1
    static let replyAuthor = 2

    /// The readers of the tables: who, and whom they block.
    enum Reader: String, CaseIterable, CustomStringConvertible {
        case anonymous, member, postAuthor, replyAuthor, blocksPostAuthor, blocksReplyAuthor, moderator, bannedModerator

        var visibility: Visibility {
            switch self {
            case .anonymous: Visibility.anonymous
            case .member: Visibility(.member(4))
            case .postAuthor: Visibility(.member(LiveBoardStreamTests.postAuthor))
            case .replyAuthor: Visibility(.member(LiveBoardStreamTests.replyAuthor))
            case .blocksPostAuthor: Visibility(.member(5))
            case .blocksReplyAuthor: Visibility(.member(6))
            case .moderator: Visibility(.moderator(9))
            // A banned moderator's viewer, as the server builds it from the session.
            case .bannedModerator: Visibility(Viewer(Identity(account: LiveBoardStreamTests.bannedModerator, sessionID: 1)))
            }
        }

        var blocked: Set<Int> {
            switch self {
            case .blocksPostAuthor: [LiveBoardStreamTests.postAuthor]
            case .blocksReplyAuthor: [LiveBoardStreamTests.replyAuthor]
            default: []
            }
        }

        var description: String { rawValue }
    }

    static let bannedModerator = Account(
        id: 8, kind: .registered, username: "mod", displayName: "mod", role: .moderator, banned: true, bannedUntil: nil, createdAt: Date(timeIntervalSince1970: 0)
    )

    static func snapshot(_ state: ContentState, _ weather: WeatherType = .rain, _ category: Category = .food) -> StreamEvent.Snapshot {
        StreamEvent.Snapshot(state: state, weatherType: weather.rawValue, category: category.rawValue)
    }

    static func postEvent(_ old: StreamEvent.Snapshot?, _ new: StreamEvent.Snapshot?, region: Int = 10) -> StreamEvent {
        StreamEvent(position: StreamPosition(7), kind: .post, postID: 100, authorID: postAuthor, regionID: region, old: old, new: new)
    }

    typealias Row = (name: String, old: ContentState?, new: ContentState, expected: [Reader: LiveBoardStream.Change])

    /// Post events, unfiltered streams: the change each reader's stream sees (absent: none).
    static let postRows: [Row] = [
        ("created", nil, .visible, [.anonymous: .post, .member: .post, .postAuthor: .post, .replyAuthor: .post, .blocksReplyAuthor: .post, .moderator: .post, .bannedModerator: .post]),
        // Held by the term filter: its author sees it as any post; moderators see it; nobody else learns of it.
        ("created held", nil, .filtered, [.postAuthor: .post, .moderator: .post]),
        ("edited", .visible, .visible, [.anonymous: .update, .member: .update, .postAuthor: .update, .replyAuthor: .update, .blocksReplyAuthor: .update, .moderator: .update, .bannedModerator: .update]),
        ("held post edited", .filtered, .filtered, [.postAuthor: .update, .moderator: .update]),
        ("hidden by reports", .visible, .hidden, [.anonymous: .remove, .member: .remove, .postAuthor: .update, .replyAuthor: .remove, .blocksReplyAuthor: .remove, .moderator: .update, .bannedModerator: .remove]),
        ("removed", .visible, .removed, [.anonymous: .remove, .member: .remove, .postAuthor: .update, .replyAuthor: .remove, .blocksReplyAuthor: .remove, .moderator: .update, .bannedModerator: .remove]),
        ("restored", .removed, .visible, [.anonymous: .post, .member: .post, .postAuthor: .update, .replyAuthor: .post, .blocksReplyAuthor: .post, .moderator: .update, .bannedModerator: .post]),
        ("dismissed (hidden made visible)", .hidden, .visible, [.anonymous: .post, .member: .post, .postAuthor: .update, .replyAuthor: .post, .blocksReplyAuthor: .post, .moderator: .update, .bannedModerator: .post]),
        ("hold released", .filtered, .visible, [.anonymous: .post, .member: .post, .postAuthor: .update, .replyAuthor: .post, .blocksReplyAuthor: .post, .moderator: .update, .bannedModerator: .post]),
        ("deleted", .visible, .deleted, [.anonymous: .remove, .member: .remove, .postAuthor: .remove, .replyAuthor: .remove, .blocksReplyAuthor: .remove, .moderator: .remove, .bannedModerator: .remove]),
        // Deleted posts reach moderators only by id and in the queue, never in a list or a stream.
        ("removed post deleted", .removed, .deleted, [.postAuthor: .remove, .moderator: .remove]),
    ]

    @Test("post events × readers", arguments: LiveBoardStreamTests.postRows.map { $0.name })
    func postEvents(_ name: String) {
        let row = Self.postRows.first { $0.name == name }!
        let event = Self.postEvent(row.old.map { Self.snapshot($0) }, Self.snapshot(row.new))
        for reader in Reader.allCases {
            let stream = LiveBoardStream(reader: reader.visibility)
            #expect(stream.change(for: event, blocked: reader.blocked) == row.expected[reader], "\(name): \(reader)")
        }
    }

    @Test("post events × filters: a post moving into or out of a filter appears or leaves")
    func postFilters() {
        let anonymous = Visibility.anonymous
        let rainFood = LiveBoardStream(reader: anonymous, weatherType: .rain, category: .food)
        let snowy = LiveBoardStream(reader: anonymous, weatherType: .snow)
        let region10 = LiveBoardStream(reader: anonymous, regionID: 10)
        let region11 = LiveBoardStream(reader: anonymous, regionID: 11)
        let created = Self.postEvent(nil, Self.snapshot(.visible, .rain, .food))
        #expect(rainFood.change(for: created, blocked: []) == .post)
        #expect(snowy.change(for: created, blocked: []) == nil)
        #expect(region10.change(for: created, blocked: []) == .post)
        #expect(region11.change(for: created, blocked: []) == nil)
        let toSnow = Self.postEvent(Self.snapshot(.visible, .rain, .food), Self.snapshot(.visible, .snow, .food))
        #expect(rainFood.change(for: toSnow, blocked: []) == .remove)
        #expect(snowy.change(for: toSnow, blocked: []) == .post)
        let toMusic = Self.postEvent(Self.snapshot(.visible, .rain, .food), Self.snapshot(.visible, .rain, .music))
        #expect(rainFood.change(for: toMusic, blocked: []) == .remove)
        // A moderator's filtered stream: the filters hold for staff too.
        let moderatorSnow = LiveBoardStream(reader: Visibility(.moderator(9)), weatherType: .snow)
        #expect(moderatorSnow.change(for: Self.postEvent(nil, Self.snapshot(.hidden, .rain)), blocked: []) == nil)
        #expect(moderatorSnow.change(for: Self.postEvent(nil, Self.snapshot(.hidden, .snow)), blocked: []) == .post)
    }

    // MARK: Replies

    static func post(_ state: ContentState, weather: WeatherType = .rain, region: Int = 10) -> Post {
        Fixture.post(100, author: postAuthor, state: state, region: region, weather: weather)
    }

    static func replyEvent(_ old: ContentState?, _ new: ContentState, author: Int = replyAuthor) -> StreamEvent {
        StreamEvent(
            position: StreamPosition(8), kind: .reply, postID: 100, authorID: author, regionID: 10, old: old.map { snapshot($0) }, new: snapshot(new), replyID: 200
        )
    }

    typealias ReplyRow = (name: String, post: ContentState, old: ContentState?, new: ContentState, author: Int, expected: [Reader: LiveBoardStream.Change])

    /// Reply events on a post by 1: the change each reader's stream sees.
    static let replyRows: [ReplyRow] = [
        ("reply on a visible post", .visible, nil, .visible, replyAuthor,
         [.anonymous: .post, .member: .post, .postAuthor: .post, .replyAuthor: .post, .moderator: .post, .bannedModerator: .post]),
        ("held reply", .visible, nil, .filtered, replyAuthor, [.replyAuthor: .post, .moderator: .post]),
        ("reply edited", .visible, .visible, .visible, replyAuthor,
         [.anonymous: .update, .member: .update, .postAuthor: .update, .replyAuthor: .update, .moderator: .update, .bannedModerator: .update]),
        ("reply removed", .visible, .visible, .removed, replyAuthor,
         [.anonymous: .remove, .member: .remove, .postAuthor: .remove, .replyAuthor: .update, .moderator: .update, .bannedModerator: .remove]),
        ("reply restored", .visible, .removed, .visible, replyAuthor,
         [.anonymous: .post, .member: .post, .postAuthor: .post, .replyAuthor: .update, .moderator: .update, .bannedModerator: .post]),
        ("reply deleted", .visible, .visible, .deleted, replyAuthor,
         [.anonymous: .remove, .member: .remove, .postAuthor: .remove, .replyAuthor: .remove, .moderator: .remove, .bannedModerator: .remove]),
        // The author's own held post behaves as visible to the author: it takes and shows replies (CONTRACT §1).
        ("author replies on own held post", .filtered, nil, .visible, postAuthor, [.postAuthor: .post, .moderator: .post]),
        // A post hidden by reports shows no replies but to moderators.
        ("reply on a hidden post", .hidden, nil, .visible, replyAuthor, [.moderator: .post]),
        ("reply on a removed post", .removed, .visible, .visible, replyAuthor, [.moderator: .update]),
        // A deleted post is in no stream.
        ("reply on a deleted post", .deleted, .visible, .deleted, replyAuthor, [:]),
    ]

    @Test("reply events × readers", arguments: LiveBoardStreamTests.replyRows.map { $0.name })
    func replyEvents(_ name: String) {
        let row = Self.replyRows.first { $0.name == name }!
        let event = Self.replyEvent(row.old, row.new, author: row.author)
        let post = Self.post(row.post)
        for reader in Reader.allCases {
            let stream = LiveBoardStream(reader: reader.visibility)
            // Blocking either author takes the reply out.
            let expected = reader == .blocksPostAuthor || (reader == .blocksReplyAuthor && row.author == Self.replyAuthor) ? nil : row.expected[reader]
            #expect(stream.replyChange(for: event, post: post, blocked: reader.blocked) == expected, "\(name): \(reader)")
        }
    }

    @Test("reply events follow their post's filters, not their own")
    func replyFilters() {
        let event = Self.replyEvent(nil, .visible)
        #expect(LiveBoardStream(reader: .anonymous, weatherType: .rain).replyChange(for: event, post: Self.post(.visible, weather: .rain), blocked: []) == .post)
        #expect(LiveBoardStream(reader: .anonymous, weatherType: .snow).replyChange(for: event, post: Self.post(.visible, weather: .rain), blocked: []) == nil)
        #expect(LiveBoardStream(reader: .anonymous, regionID: 11).replyChange(for: event, post: Self.post(.visible, region: 10), blocked: []) == nil)
        #expect(LiveBoardStream(reader: .anonymous).replyChange(for: event, post: nil, blocked: []) == nil)
    }

    @Test("reader classes: the item's author, whoever else reads")
    func readerClasses() {
        #expect(LiveBoardStream(reader: .anonymous).readerClass(author: 1) == .anonymous)
        #expect(LiveBoardStream(reader: Visibility(.member(4))).readerClass(author: 1) == .member)
        #expect(LiveBoardStream(reader: Visibility(.member(1))).readerClass(author: 1) == .author(moderator: false))
        #expect(LiveBoardStream(reader: Visibility(.moderator(9))).readerClass(author: 1) == .moderator)
        #expect(LiveBoardStream(reader: Visibility(.moderator(9))).readerClass(author: 9) == .author(moderator: true))
        #expect(LiveBoardStream(reader: Reader.bannedModerator.visibility).readerClass(author: 1) == .member)
    }
}
