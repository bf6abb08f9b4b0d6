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
