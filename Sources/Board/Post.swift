import Foundation
import Vocabulary

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
    /// Its region's weather when it was created (CONTRACT §9); nil when none could be had, or made before they were.
    public var conditions: PostConditions?
    /// Every helpful mark (CONTRACT §9).
    public var helpfulCount: Int
    /// The marks that rank it (`top`), and its stored `hot` score (`PostSort`).
    public var trustedHelpfulCount: Int
    public var hotScore: Double
    /// Whether the reader of this copy has marked it helpful.
    public var helpedByMe: Bool
    /// Its visible replies (CONTRACT §13), kept on the post's row by sql/0026's trigger.
    public var replyCount: Int = 0

    public init(
        id: Int, authorID: Int, authorDisplayName: String, region: RegionSummary, weatherType: WeatherType, category: Category,
        title: String?, body: String, status: PostStatus, hiddenReason: String? = nil, deleted: Bool, createdAt: Date, updatedAt: Date, edited: Bool,
        version: Int = 1, media: [Media] = [], conditions: PostConditions? = nil,
        helpfulCount: Int = 0, trustedHelpfulCount: Int = 0, hotScore: Double = 0, helpedByMe: Bool = false, replyCount: Int = 0
    ) {
        self.replyCount = replyCount
        self.conditions = conditions
        self.helpfulCount = helpfulCount
        self.trustedHelpfulCount = trustedHelpfulCount
        self.hotScore = hotScore
        self.helpedByMe = helpedByMe
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
