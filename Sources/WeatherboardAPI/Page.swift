/// Every list in the contract: `{"items": [...], "nextCursor": "…" | null}`. It encodes the way its items do:
/// with `JSONWriter` for `JSONWritable` items, with `JSONEncoder` for `Encodable` ones.
public struct Page<Item: Sendable>: Sendable {
    public var items: [Item]
    public var nextCursor: String?

    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }

    enum CodingKeys: String, CodingKey {
        case items, nextCursor
    }
}

extension Page: Decodable where Item: Decodable {}

extension Page: Encodable where Item: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        // Always present, `null` on the last page.
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}

extension Page: JSONWritable where Item: JSONWritable {
    public var jsonCapacity: Int { 64 + items.reduce(0) { $0 + $1.jsonCapacity } }

    public func write(to w: inout JSONWriter) {
        w.raw("{")
        w.key("items", first: true)
        w.array(items)
        w.key("nextCursor")
        w.optionalString(nextCursor)
        w.raw("}")
    }
}
