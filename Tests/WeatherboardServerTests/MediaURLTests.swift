import Foundation
import Testing

/// Who decides the scheme and host of media URLs (issue #19, point 6): a proxy in `TRUSTED_PROXIES`, nobody else.
@Suite("Media URLs and proxies")
struct MediaURLTests {
    static let forged = [("X-Forwarded-Proto", "https"), ("Host", "evil.example")]

    @Test("an untrusted client's X-Forwarded-Proto and Host do not change `url`; a trusted proxy's do")
    func forwardedHeadersNeedATrustedProxy() async throws {
        let (account, id) = try await withMediaServer { server in
            // The test client's 127.0.0.1 is a trusted proxy here: what it forwards is believed.
            let account = try await server.anonymousAccount()
            let created = try await server.upload(try await MediaFixtures.jpeg, token: account.token)
            let id = try #require(created.object["id"] as? String, "\(created.text)")
            let proxied = try await server.request(
                "GET", "/v1/media/\(id)", headers: [("Authorization", "Bearer \(account.token)"), ("X-Forwarded-Proto", "https"), ("Host", "board.example")]
            )
            #expect((proxied.object["url"] as? String)?.hasPrefix("https://board.example/media/") == true, "\(proxied.text)")
            return (account, id)
        }
        try await withMediaServer(configure: { $0.trustedProxies = [] }) { server in
            let own = "http://127.0.0.1:\(server.port)/media/"
            let read = try await server.request("GET", "/v1/media/\(id)", headers: [("Authorization", "Bearer \(account.token)")] + Self.forged)
            #expect(read.status == 200, "\(read.text)")
            #expect((read.object["url"] as? String)?.hasPrefix(own) == true, "\(read.text)")
            #expect((read.object["previewUrl"] as? String)?.hasPrefix(own) == true, "\(read.text)")
            let posted = try await server.json(
                "POST", "/v1/posts", token: account.token, headers: Self.forged,
                ["weatherType": "rain", "category": "food", "body": "창밖의 비", "regionId": "1835848", "mediaIds": [id]]
            )
            #expect(posted.status == 201, "\(posted.text)")
            let media = (posted.object["media"] as? [[String: Any]])?.first
            #expect((media?["url"] as? String)?.hasPrefix(own) == true, "\(posted.text)")
        }
    }
}
