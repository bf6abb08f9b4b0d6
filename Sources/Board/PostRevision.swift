import Foundation

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
