import Foundation
import WeatherboardAPI

/// The moderator API's calls, typed.
extension AdminClient {
    func queuePage(limit: Int, cursor: String?) async throws -> (Page<QueueItemResponse>, [UInt8]) {
        var query = [("limit", String(limit))]
        if let cursor { query.append(("cursor", cursor)) }
        return try await get("/v1/moderation/queue", query: query, as: Page<QueueItemResponse>.self)
    }

    func logPage(limit: Int, cursor: String?) async throws -> (Page<ModerationLogResponse>, [UInt8]) {
        var query = [("limit", String(limit))]
        if let cursor { query.append(("cursor", cursor)) }
        return try await get("/v1/moderation/log", query: query, as: Page<ModerationLogResponse>.self)
    }

    func decide(postID: String, action: String, note: String?) async throws -> DecisionResponse {
        try await call(
            "POST", "/v1/moderation/posts/\(Self.segment(postID))/decision", body: DecisionRequest(action: action, note: note), as: DecisionResponse.self
        )
    }

    func decide(replyID: String, action: String, note: String?) async throws -> ReplyDecisionResponse {
        try await call(
            "POST", "/v1/moderation/replies/\(Self.segment(replyID))/decision", body: DecisionRequest(action: action, note: note),
            as: ReplyDecisionResponse.self
        )
    }

    func ban(accountID: String, until: Date?, reason: String) async throws -> AccountResponse {
        try await call("POST", "/v1/moderation/accounts/\(Self.segment(accountID))/ban", body: BanRequest(until: until, reason: reason), as: AccountResponse.self)
    }

    func unban(accountID: String) async throws {
        try await call("DELETE", "/v1/moderation/accounts/\(Self.segment(accountID))/ban")
    }

    func post(id: String) async throws -> (PostResponse, [UInt8]) {
        try await get("/v1/posts/\(Self.segment(id))", as: PostResponse.self)
    }

    func reply(id: String) async throws -> (ReplyResponse, [UInt8]) {
        try await get("/v1/replies/\(Self.segment(id))", as: ReplyResponse.self)
    }

    /// The queue item of `target` (the queue is the only source of open reports, and of revisions), walking the queue
    /// to its end; with the item's own JSON, keys sorted, for `--json`. nil when it has no open reports.
    func queueItem(_ target: ModerationTarget) async throws -> (item: QueueItemResponse, json: [UInt8])? {
        var cursor: String? = nil
        repeat {
            let (page, raw) = try await queuePage(limit: 100, cursor: cursor)
            if let index = page.items.firstIndex(where: { $0.subject == target }) {
                let object = try JSONSerialization.jsonObject(with: Data(raw)) as? [String: Any]
                let items = object?["items"] as? [Any] ?? []
                guard items.indices.contains(index) else {
                    throw AdminError(.server, "unexpected reply from \(server)/v1/moderation/queue: not the expected JSON")
                }
                return (page.items[index], try JSONPages.encode(items[index]))
            }
            cursor = page.nextCursor
        } while cursor != nil
        return nil
    }

    func me() async throws -> AccountResponse {
        try await get("/v1/accounts/me", as: AccountResponse.self).0
    }

    /// Fetches up to `limit` items across pages (the server serves at most 100 a page). Returns the items,
    /// the cursor after the last one, and the raw pages.
    func collect<Item: Decodable & Sendable>(
        limit: Int, cursor: String?, page: (Int, String?) async throws -> (Page<Item>, [UInt8])
    ) async throws -> (items: [Item], nextCursor: String?, raw: [[UInt8]]) {
        var items: [Item] = []
        var raw: [[UInt8]] = []
        var cursor = cursor
        repeat {
            let (next, bytes) = try await page(min(100, limit - items.count), cursor)
            items += next.items
            raw.append(bytes)
            cursor = next.nextCursor
        } while cursor != nil && items.count < limit
        return (items, cursor, raw)
    }
}
