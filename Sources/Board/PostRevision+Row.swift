import Database
import Foundation

extension PostRevision {
    /// A `post_revisions` row (`weather_type, category, title, body, replaced_at`).
    init(row: PostgresRow) throws {
        self.init(
            weatherType: try row.decode(String.self, "weather_type"),
            category: try row.decode(String.self, "category"),
            title: try row.decode(String?.self, "title"),
            body: try row.decode(String.self, "body"),
            replacedAt: try row.decode(Date.self, "replaced_at")
        )
    }
}
