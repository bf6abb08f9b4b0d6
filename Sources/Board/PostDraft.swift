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
