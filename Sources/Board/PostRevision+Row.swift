import Database
import Foundation
import Vocabulary

extension PostRevision {
    /// A `post_revisions` row (`weather_type, category, title, body, replaced_at`).
    init(row: PostgresRow) throws {
        self.init(
            weatherType: try UnknownStoredValue.decode(WeatherType.self, row.decode(String.self, "weather_type"), column: "post_revisions.weather_type"),
            category: try UnknownStoredValue.decode(Category.self, row.decode(String.self, "category"), column: "post_revisions.category"),
            title: try row.decode(String?.self, "title"),
            body: try row.decode(String.self, "body"),
            replacedAt: try row.decode(Date.self, "replaced_at")
        )
    }
}
