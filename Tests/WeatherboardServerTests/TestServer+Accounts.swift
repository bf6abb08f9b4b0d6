import CurlClient
import Foundation
import Testing

/// A client's account in a test: its id and bearer token.
struct TestAccount: Sendable {
    let id: String
    let token: String
}

extension TestServer {
    /// Creates an anonymous account through the API.
    func anonymousAccount() async throws -> TestAccount {
        let response = try await json("POST", "/v1/accounts")
        try #require(response.status == 201, "account creation answered \(response.status): \(response.text)")
        let account = try #require(response.object["account"] as? [String: Any])
        return TestAccount(id: try #require(account["id"] as? String), token: try #require(response.object["token"] as? String))
    }

    /// Creates an account and registers it with a fresh username.
    func registeredAccount(prefix: String = "user") async throws -> (TestAccount, username: String, password: String) {
        let anonymous = try await anonymousAccount()
        let username = "\(prefix)_\(UInt32.random(in: 0...UInt32.max))"
        let password = "correct horse battery \(UInt16.random(in: 0...9999))"
        let response = try await json("POST", "/v1/accounts/me/credentials", token: anonymous.token, ["username": username, "password": password])
        try #require(response.status == 200, "registration answered \(response.status): \(response.text)")
        return (TestAccount(id: anonymous.id, token: try #require(response.object["token"] as? String)), username, password)
    }

    /// Creates a post and returns its JSON.
    func createPost(
        _ account: TestAccount, weatherType: String = "rain", category: String = "food", title: String? = nil,
        body: String = "비 오는 날엔 파전에 막걸리", regionId: String = "1835848", headers: [(String, String)] = []
    ) async throws -> [String: Any] {
        var payload: [String: Any] = ["weatherType": weatherType, "category": category, "body": body, "regionId": regionId]
        if let title { payload["title"] = title }
        let response = try await json("POST", "/v1/posts", token: account.token, headers: headers, payload)
        try #require(response.status == 201, "post creation answered \(response.status): \(response.text)")
        return response.object
    }

    /// An admin, and a moderator that admin has banned (a banned moderator reads as a member: CONTRACT §1, §5).
    func staff() async throws -> (admin: TestAccount, bannedModerator: TestAccount) {
        let admin = try await anonymousAccount()
        let banned = try await anonymousAccount()
        try await grantRole("admin", to: admin)
        try await grantRole("moderator", to: banned)
        let ban = try await json("POST", "/v1/moderation/accounts/\(banned.id)/ban", token: admin.token, ["until": nil as String?, "reason": "test"] as [String: Any?])
        try #require(ban.status == 200, "ban answered \(ban.status): \(ban.text)")
        return (admin, banned)
    }

    /// Grants a role directly in the database, as `weatherboard roles grant` does.
    func grantRole(_ role: String, to account: TestAccount) async throws {
        try await dependencies.database.execute("UPDATE accounts SET role = \(role) WHERE id = \(Int(account.id)!)")
    }
}

extension CurlResponse {
    var items: [[String: Any]] { object["items"] as? [[String: Any]] ?? [] }
}
