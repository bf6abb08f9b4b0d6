import Foundation
import Vocabulary

/// A previous version of a post.
public struct PostRevision: Sendable, Equatable {
    public var weatherType: WeatherType
    public var category: Category
    public var title: String?
    public var body: String
    public var replacedAt: Date

    public init(weatherType: WeatherType, category: Category, title: String?, body: String, replacedAt: Date) {
        self.weatherType = weatherType
        self.category = category
        self.title = title
        self.body = body
        self.replacedAt = replacedAt
    }
}
