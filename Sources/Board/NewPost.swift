import Vocabulary

/// A validated new post.
public struct NewPost: Sendable, Equatable {
    public var weatherType: WeatherType
    public var category: Category
    public var title: String?
    public var body: String
    public var regionID: Int
    /// Media to attach, in display order (at most 4).
    public var mediaIDs: [Int] = []
    /// The region's weather now (CONTRACT §9), looked up before the create's transaction; nil when none was had.
    public var conditions: PostConditions?
}
