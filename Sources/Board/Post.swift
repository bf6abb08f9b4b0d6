import Foundation
import Vocabulary

public enum PostStatus: String, Sendable {
    case visible, hidden, removed
    /// Shown to moderators for a soft-deleted post (the stored status stays what it was).
    case deleted
}

extension Post {
    /// The status the author is shown. A post held by the term filter looks visible to its author, so a
    /// spammer cannot probe the term list; moderators see the real status.
    public func status(shownTo viewer: Viewer) -> PostStatus? {
        if viewer.isModerator { return deleted ? .deleted : status }
        guard viewer.accountID == authorID else { return nil }
        return status == .hidden && hiddenReason == "filter" ? .visible : status
    }
}

/// A post as stored, with what lists show of its author and region.
public struct Post: Sendable, Equatable {
    public var id: Int
    public var authorID: Int
    public var authorDisplayName: String
    public var region: RegionSummary
    public var weatherType: WeatherType
    public var category: Category
    public var title: String?
    public var body: String
    public var status: PostStatus
    /// Why a hidden post is hidden: `reports` (auto-hide) or `filter` (held by the term filter).
    public var hiddenReason: String?
    public var deleted: Bool
    public var createdAt: Date
    public var updatedAt: Date
    public var edited: Bool
    /// 1 when created, one more with every edit that changed something (the API's `ETag`).
    public var version: Int
    /// Its images, in display order (CONTRACT §8).
    public var media: [Media]

    public init(
        id: Int, authorID: Int, authorDisplayName: String, region: RegionSummary, weatherType: WeatherType, category: Category,
        title: String?, body: String, status: PostStatus, hiddenReason: String? = nil, deleted: Bool, createdAt: Date, updatedAt: Date, edited: Bool,
        version: Int = 1, media: [Media] = []
    ) {
        self.media = media
        self.version = version
        self.hiddenReason = hiddenReason
        self.id = id
        self.authorID = authorID
        self.authorDisplayName = authorDisplayName
        self.region = region
        self.weatherType = weatherType
        self.category = category
        self.title = title
        self.body = body
        self.status = status
        self.deleted = deleted
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.edited = edited
    }
}

/// The region fields a post carries.
public struct RegionSummary: Sendable, Equatable {
    public var id: Int
    public var nameEnglish: String
    public var nameKorean: String?
    public var countryCode: String

    public init(id: Int, nameEnglish: String, nameKorean: String?, countryCode: String) {
        self.id = id
        self.nameEnglish = nameEnglish
        self.nameKorean = nameKorean
        self.countryCode = countryCode
    }

    public func name(in language: Language) -> String {
        language.placeName(korean: nameKorean, english: nameEnglish)
    }
}

/// A previous version of a post.
public struct PostRevision: Sendable, Equatable {
    public var weatherType: String
    public var category: String
    public var title: String?
    public var body: String
    public var replacedAt: Date

    public init(weatherType: String, category: String, title: String?, body: String, replacedAt: Date) {
        self.weatherType = weatherType
        self.category = category
        self.title = title
        self.body = body
        self.replacedAt = replacedAt
    }
}

/// Where a new post is: a region id, or coordinates to snap to the nearest region (never stored).
public enum PostLocation: Sendable, Equatable {
    case region(Int)
    case coordinates(lat: Double, lon: Double)
}

/// A post as the client sent it, before validation.
public struct PostDraft: Sendable {
    public var weatherType: String?
    public var category: String?
    public var title: String?
    public var body: String?
    public var location: PostLocation?

    /// Media to attach, in display order.
    public var mediaIDs: [Int] = []

    public init(weatherType: String?, category: String?, title: String?, body: String?, location: PostLocation?) {
        self.weatherType = weatherType
        self.category = category
        self.title = title
        self.body = body
        self.location = location
    }
}

/// A validated new post.
public struct NewPost: Sendable, Equatable {
    public var weatherType: WeatherType
    public var category: Category
    public var title: String?
    public var body: String
    public var regionID: Int
    /// Media to attach, in display order (at most 4).
    public var mediaIDs: [Int] = []
}

/// A PATCH: nil leaves a field alone; `title: .some(nil)` clears the title.
public struct PostPatch: Sendable {
    public var title: String??
    public var body: String?
    public var weatherType: String?
    public var category: String?
    /// The post's media, replacing the list (media left off it is deleted); nil leaves it alone.
    public var mediaIDs: [Int]?

    public init(title: String??, body: String?, weatherType: String?, category: String?, mediaIDs: [Int]? = nil) {
        self.mediaIDs = mediaIDs
        self.title = title
        self.body = body
        self.weatherType = weatherType
        self.category = category
    }
}

/// What an edit writes over the locked row (`PostStore.edit`): the merged fields, and `hidden` when the
/// term filter holds a visible post.
public struct PostEdit: Sendable, Equatable {
    public var weatherType: WeatherType
    public var category: Category
    public var title: String?
    public var body: String
    public var status: PostStatus?
    /// The new media list; nil leaves it alone.
    public var mediaIDs: [Int]?

    public init(weatherType: WeatherType, category: Category, title: String?, body: String, status: PostStatus?, mediaIDs: [Int]? = nil) {
        self.mediaIDs = mediaIDs
        self.weatherType = weatherType
        self.category = category
        self.title = title
        self.body = body
        self.status = status
    }
}

/// An edit's precondition (the API's `If-Match`): any existing post, or one of the listed versions.
public enum VersionPrecondition: Sendable, Equatable {
    case any
    case oneOf([Int])

    public func matches(_ version: Int) -> Bool {
        switch self {
        case .any: return true
        case .oneOf(let versions): return versions.contains(version)
        }
    }
}

/// List filters, combined freely, plus the page.
public struct PostQuery: Sendable, Equatable {
    public var weatherType: WeatherType?
    public var category: Category?
    public var regionID: Int?
    public var authorID: Int?
    /// Only posts with an id below this one (the cursor).
    public var before: Int?
    public var limit: Int

    public init(weatherType: WeatherType? = nil, category: Category? = nil, regionID: Int? = nil, authorID: Int? = nil, before: Int? = nil, limit: Int = 20) {
        self.weatherType = weatherType
        self.category = category
        self.regionID = regionID
        self.authorID = authorID
        self.before = before
        self.limit = limit
    }
}

/// Who is reading, for visibility rules.
public struct Viewer: Sendable, Equatable {
    public var accountID: Int?
    public var isModerator: Bool

    public init(accountID: Int?, isModerator: Bool) {
        self.accountID = accountID
        self.isModerator = isModerator
    }

    public static let anonymous = Viewer(accountID: nil, isModerator: false)

    public init(_ identity: Identity?) {
        self.accountID = identity?.accountID
        // A banned moderator reads like anyone else: no staff powers while banned.
        self.isModerator = identity.map { $0.account.role.canModerate && !$0.account.banned } ?? false
    }
}

/// One page of posts and the cursor to the next.
public struct PostPage: Sendable {
    public var posts: [Post]
    public var nextCursor: String?

    public init(posts: [Post], nextCursor: String?) {
        self.posts = posts
        self.nextCursor = nextCursor
    }
}
