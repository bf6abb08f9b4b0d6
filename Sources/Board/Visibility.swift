import Database

/// Who sees what (CONTRACT §1): the one rule, for posts and replies, asked by every route, order, stream and
/// notification. It answers in Swift (`shows`, `status`, `treatsAsVisible`) and as SQL conditions that every statement
/// composes (`PostgresPostStore`'s lists, search and single reads, `PostgresReplyStore`'s replies and inbox).
///
/// The rule:
/// - A visible item is shown to everyone.
/// - A held (term filter), hidden or removed item is shown to its author and to moderators. A held item looks and
///   behaves to its author exactly like a visible one (`status`, `treatsAsVisible`), so the hold cannot be probed.
/// - A deleted item is shown to moderators only by id (`Place.byID`) and in the queue, never in a list.
/// - A reply is shown only where its post behaves as visible to the reader (moderators: wherever they can read the post).
/// - Blocks take a blocked author's items out of the blocker's lists, streams, inbox and notifications
///   (`Place.list`), not out of reads by id.
/// - A banned moderator or admin reads as a member: no staff view while banned.
public struct Visibility: Sendable, Hashable {
    public enum Reader: Sendable, Hashable {
        case anonymous
        case member(Int)
        /// nil: staff with no account of their own in view (the live board renders a moderator's copy of someone
        /// else's post this way).
        case moderator(Int?)
        /// A signed-in reader whose session the statement itself checks (`SessionGate`): a member's view, its account
        /// the session's (`SessionGate.account`). Known only in SQL: the Swift answers take the reader the statement
        /// resolved (`SessionGate.settle`), and a moderator's read is run again as `.moderator`.
        case session
    }

    /// Where an item is read: lists, search, feeds, streams, the inbox and notifications; or one item by its id.
    public enum Place: Sendable {
        case list, byID
    }

    public let reader: Reader

    public init(_ reader: Reader) {
        self.reader = reader
    }

    public init(_ viewer: Viewer) {
        if viewer.pendingGate != nil { reader = .session; return }
        switch (viewer.accountID, viewer.isModerator) {
        case (let id, true): reader = .moderator(id)
        case (nil, false): reader = .anonymous
        case (let id?, false): reader = .member(id)
        }
    }

    public static let anonymous = Visibility(Reader.anonymous)

    public var accountID: Int? {
        switch reader {
        case .anonymous: nil
        case .member(let id): id
        case .moderator(let id): id
        case .session: nil
        }
    }

    /// The reader's account id in SQL: a bind parameter, or the statement's own session's account (`.session`); nil
    /// for an anonymous reader and staff with no account in view.
    public var account: SQLQuery? {
        switch reader {
        case .session: SessionGate.account
        default: accountID.map { "\($0)" }
        }
    }

    public var isModerator: Bool {
        if case .moderator = reader { return true }
        return false
    }

    /// Whether the reader has blocks that apply to lists (every signed-in reader, moderators included: CONTRACT §3).
    public var hasBlocks: Bool { account != nil }

    // MARK: The rule in Swift

    /// Whether the reader sees an item by `authorID` in `state`, read at `place`.
    public func shows(_ state: ContentState, authorID: Int, at place: Place = .byID) -> Bool {
        switch state {
        case .visible: true
        case .filtered, .hidden, .removed: isModerator || accountID == authorID
        case .deleted: isModerator && place == .byID
        }
    }

    /// Whether the item acts as visible for this reader: it takes replies, it shows its replies, it counts as public.
    /// True for a visible item, and for the reader's own item held by the term filter.
    public func treatsAsVisible(_ state: ContentState, authorID: Int) -> Bool {
        state == .visible || (state == .filtered && accountID == authorID)
    }

    /// The `status` the reader is shown of an item it sees: moderators the real one, the author its own (a held item
    /// reads as visible), anyone else none.
    public func status(_ state: ContentState, authorID: Int) -> PostStatus? {
        if isModerator { return state.status }
        guard accountID == authorID else { return nil }
        return state == .filtered ? .visible : state.status
    }

    /// Whether the reader sees a reply in `reply` state by `authorID` on a post in `post` state by `postAuthorID`.
    public func showsReply(_ reply: ContentState, authorID: Int, post: ContentState, postAuthorID: Int, at place: Place = .byID) -> Bool {
        guard showsReplies(of: post, authorID: postAuthorID) else { return false }
        return shows(reply, authorID: authorID, at: place)
    }

    /// Whether a post's replies are in the reader's view at all: where the post behaves as visible to the reader, or to
    /// a moderator wherever the moderator can read the post.
    public func showsReplies(of post: ContentState, authorID: Int) -> Bool {
        isModerator ? shows(post, authorID: authorID, at: .byID) : treatsAsVisible(post, authorID: authorID)
    }

    /// Whether a reply belongs in the reader's inbox, and so notifies the reader (CONTRACT §13, §14): someone else's
    /// reply to the reader's own post, shown to the reader in lists (a member's view, whatever the reader's role: a held
    /// reply is in nobody's inbox). The SQL of the same rule is `PostgresReplyStore.inboxConditions`, with the blocks.
    public static func inboxHolds(_ reply: ContentState, authorID: Int, post: ContentState, postAuthorID: Int) -> Bool {
        guard authorID != postAuthorID else { return false }
        return Visibility(.member(postAuthorID)).showsReply(reply, authorID: authorID, post: post, postAuthorID: postAuthorID, at: .list)
    }

    // MARK: The rule in SQL

    /// The parts a list walks for this reader, each through its own partial indexes (sql/0017, 0021, 0022): their union
    /// is `condition(_:)` at `.list`. `author`: a list filtered by one author (a member's list of another author has no
    /// part of the member's own).
    public func branches(author: Int? = nil) -> [Branch] {
        switch reader {
        case .anonymous: return [.visible]
        case .moderator: return [.visible, .unlisted]
        case .member(let me):
            if let author, author != me { return [.visible] }
            return [.visible, .ownUnlisted("\(me)")]
        case .session:
            // Whether a list of one author is the reader's own is known in the statement: the own walk reads nothing
            // of anyone else (its author's range is the reader's).
            return [.visible, .ownUnlisted(SessionGate.account)]
        }
    }

    /// One part of a reader's list (`branches`).
    public enum Branch: Sendable {
        /// Visible, undeleted items: everyone's.
        case visible
        /// Every held, hidden and removed item: a moderator's.
        case unlisted
        /// One author's own held, hidden and removed items: the author's id in SQL (`Visibility.account`).
        case ownUnlisted(SQLQuery)

        /// The branch's rows of `alias` (posts or replies). `ownUnlisted` leaves out the author's equality: the walk
        /// that reads it writes that as its index's range (`PlanTricks`).
        public func condition(_ alias: String) -> SQLQuery {
            switch self {
            case .visible: "\(raw: alias).status = 'visible' AND \(raw: alias).deleted_at IS NULL"
            case .unlisted, .ownUnlisted: "\(raw: alias).status <> 'visible' AND \(raw: alias).deleted_at IS NULL"
            }
        }
    }

    /// The rows of `alias` (posts or replies) that behave as visible to their own author (`treatsAsVisible`): visible, or
    /// held by the term filter, and not deleted. The inbox is replies on the reader's own posts that do. NULL-free, so it
    /// can be negated.
    public static func treatedAsVisibleByAuthor(_ alias: String) -> SQLQuery {
        """
        (\(raw: alias).deleted_at IS NULL AND (\(raw: alias).status = 'visible' \
        OR (\(raw: alias).status = 'hidden' AND \(raw: alias).hidden_reason IS NOT DISTINCT FROM 'filter')))
        """
    }

    /// The rows of `alias` (posts `p` or replies `r`: both have `status`, `author_id`, `deleted_at`) the reader sees at
    /// `place`, as a condition to AND into a statement.
    public func condition(_ alias: String, at place: Place = .list) -> SQLQuery {
        switch reader {
        case .anonymous:
            return Branch.visible.condition(alias)
        case .member, .session:
            return "\(raw: alias).deleted_at IS NULL AND (\(raw: alias).status = 'visible' OR \(raw: alias).author_id = \(account ?? "NULL"))"
        case .moderator:
            return place == .byID ? "true" : "\(raw: alias).deleted_at IS NULL"
        }
    }
}

/// A post's or reply's state, as the rule reads it (`stream_post_state` in sql/0024 names the same states).
public enum ContentState: String, Sendable, Hashable, CaseIterable {
    case visible
    /// Held by the term filter: its author sees it as visible, everyone else but moderators not at all.
    case filtered
    case hidden, removed, deleted

    public init(status: PostStatus, hiddenReason: String?, deleted: Bool) {
        if deleted { self = .deleted; return }
        switch status {
        case .visible: self = .visible
        case .hidden: self = hiddenReason == "filter" ? .filtered : .hidden
        case .removed: self = .removed
        case .deleted: self = .deleted
        }
    }

    /// The stored status a moderator is shown.
    public var status: PostStatus {
        switch self {
        case .visible: .visible
        case .filtered, .hidden: .hidden
        case .removed: .removed
        case .deleted: .deleted
        }
    }
}
