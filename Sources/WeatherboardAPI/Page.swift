/// Every list in the contract: `{"items": [...], "nextCursor": "…" | null}`.
public struct Page<Item: Codable & Sendable>: Codable, Sendable {
    public var items: [Item]
    public var nextCursor: String?

    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(items, forKey: .items)
        // Always present, `null` on the last page.
        try container.encode(nextCursor, forKey: .nextCursor)
    }
}

/// `GET /healthz` and `GET /readyz`.
public struct HealthStatus: Codable, Sendable, Equatable {
    public var status: String
    public init(status: String) { self.status = status }
}
