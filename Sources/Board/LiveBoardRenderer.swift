import Vocabulary

/// Turns what the live board decided into a message on the wire. The server supplies it (the wire types are not
/// Board's); `LiveBoard` calls it once per event and audience class, never once per subscriber.
public protocol LiveBoardRenderer: Sendable {
    associatedtype Message: Sendable
    /// How a stream's media are linked (part of the audience class: two link bases render apart).
    associatedtype Links: Hashable & Sendable

    /// One message: `id` nil for a message that carries none (the first removes of a block); `audience` and `links` nil
    /// for content that reads the same to everyone (`removed`, `replyRemoved`, `resolved`, `reset`).
    func render(_ content: LiveBoardContent, id: StreamPosition?, for audience: LiveBoardAudience?, links: Links?) -> Message
}

/// What one message says.
public enum LiveBoardContent: Sendable {
    /// `post` or `update`: the post as the audience sees it (`helpedByMe` set for the readers who marked it).
    case post(Post, LiveBoardStream.Change)
    /// `remove`: the post left the stream.
    case removed(postID: Int)
    /// `reply`: the reply appeared or changed.
    case reply(Reply)
    /// `replyRemoved`: the reply left the stream.
    case replyRemoved(replyID: Int, postID: Int)
    /// `report` (moderation streams): the queue item as it is now.
    case report(QueueItem)
    /// `resolved` (moderation streams).
    case resolved(postID: Int, replyID: Int?, action: String, moderatorID: Int?)
    /// `reset`: reload the list, then stream.
    case reset
}

/// The readers one rendering serves: every subscriber with the same reader class and language (and links, passed
/// beside it). Blocks are not part of it: they choose who receives an event, not how it reads.
public struct LiveBoardAudience: Sendable, Hashable {
    /// How a reader reads one item, relative to the item's author.
    public enum Reader: Sendable, Hashable {
        case anonymous
        /// Signed in, not the item's author.
        case member
        /// A moderator (not banned), not the item's author: the real status.
        case moderator
        /// The item's author: `isMine`, and its own status (a held item reads as visible; `moderator`: the real one).
        case author(moderator: Bool)
    }

    public var reader: Reader
    public var language: Language

    public init(reader: Reader, language: Language) {
        self.reader = reader
        self.language = language
    }

    /// The viewer a rendering of an item by `authorID` is made for: the author's own for the author, else an
    /// account-less reader with the class's staff view (nothing in a rendering for a non-author depends on who).
    public func viewer(author authorID: Int) -> Viewer {
        switch reader {
        case .anonymous, .member: Viewer(accountID: nil, isModerator: false)
        case .moderator: Viewer(accountID: nil, isModerator: true)
        case .author(let moderator): Viewer(accountID: authorID, isModerator: moderator)
        }
    }
}
