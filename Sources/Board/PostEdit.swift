import Vocabulary

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
