import Foundation

/// `--json` output of listings: the server's page verbatim, or the pages merged into one envelope.
enum JSONPages {
    static func print(_ pages: [[UInt8]], nextCursor: String?) throws {
        if pages.count == 1 {
            Console.raw(pages[0])
            return
        }
        var items: [Any] = []
        for page in pages {
            let object = try JSONSerialization.jsonObject(with: Data(page)) as? [String: Any]
            items += object?["items"] as? [Any] ?? []
        }
        let merged: [String: Any] = ["items": items, "nextCursor": nextCursor.map { $0 as Any } ?? NSNull()]
        Console.raw(try encode(merged))
    }

    /// A JSON object made again from the server's (keys sorted, slashes as they are).
    static func encode(_ object: Any) throws -> [UInt8] {
        [UInt8](try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
    }
}
