import CurlClient
import Foundation
import Testing

/// CONTRACT §14's devices under attack: a phone farm on one account, a 10 MB token, a flood of settings.
@Suite("Notifications: devices and settings attacked")
struct PushAttackTests {
    @Test("10,000 device registrations by one account, 100 at a time: every one answered 201, and the account keeps exactly its 10 newest")
    func tenThousandDevices() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let account = try await server.anonymousAccount()
            let body = ["environment": "production", "timeZone": "Asia/Seoul"]
            var statuses: [Int: Int] = [:]
            for _ in 0..<100 {
                let batch = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<100 {
                        group.addTask {
                            try await server.json("PUT", "/v1/accounts/me/devices/\(NotificationSettingsTests.deviceToken())", token: account.token, body).status
                        }
                    }
                    var all: [Int] = []
                    for try await status in group { all.append(status) }
                    return all
                }
                for status in batch { statuses[status, default: 0] += 1 }
            }
            #expect(statuses == [201: 10_000])
            let id = Int(account.id)!
            #expect(try await server.dependencies.database.query("SELECT count(*) AS n FROM devices WHERE account_id = \(id)")[0].decode(Int.self, "n") == 10)
            let list = try await server.json("GET", "/v1/accounts/me/devices?limit=100", token: account.token)
            #expect(NotificationSettingsTests.tokens(list).count == 10)
        }
    }

    @Test("a 10 MB device token is refused without being read into a device, and the server goes on answering")
    func hugeToken() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let token = String(repeating: "ab", count: 5 * 1024 * 1024)
            let status: Int
            do {
                status = try await server.json("PUT", "/v1/accounts/me/devices/\(token)", token: account.token, ["environment": "sandbox", "timeZone": "Asia/Seoul"]).status
            } catch is CurlError {
                status = 0  // the connection was closed on it: refused too
            }
            #expect(status == 0 || (400..<500).contains(status), "\(status)")
            #expect(NotificationSettingsTests.tokens(try await server.json("GET", "/v1/accounts/me/devices", token: account.token)).isEmpty)
            #expect(try await server.json("GET", "/v1/accounts/me/notifications", token: account.token).status == 200)
        }
    }

    @Test("absurd settings: times past 23:59, negative, with seconds or a sign, unknown days, a day list of 3,000, NUL (a larger body is 413): 422 naming the field, nothing changed")
    func absurdSettings() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let before = try await server.json("GET", "/v1/accounts/me/notifications", token: account.token).text
            let cases: [([String: Any], String)] = [
                (["briefing": ["time": "24:00"]], "briefing.time"),
                (["briefing": ["time": "-1:00"]], "briefing.time"),
                (["briefing": ["time": "+7:00"]], "briefing.time"),
                (["briefing": ["time": "07:00:00"]], "briefing.time"),
                (["briefing": ["time": "７:００"]], "briefing.time"),
                (["briefing": ["time": "07:00\u{0}"]], "briefing.time"),
                (["briefing": ["time": 700]], "briefing.time"),
                (["briefing": ["days": ["someday"]]], "briefing.days"),
                (["briefing": ["days": Array(repeating: "mon\u{0}", count: 3_000)]], "briefing.days"),
                (["quietHours": ["start": "99:99", "end": "07:00"]], "quietHours.start"),
                (["quietHours": ["start": "22:00", "end": "7:00"]], "quietHours.end"),
            ]
            for (body, field) in cases {
                let response = try await server.json("PATCH", "/v1/accounts/me/notifications", token: account.token, body)
                #expect(response.status == 422, "\(field): \(response.status) \(response.text)")
                #expect(response.errorMessage?.hasPrefix(field) == true, "\(response.errorMessage ?? "")")
            }
            #expect(try await server.json("GET", "/v1/accounts/me/notifications", token: account.token).text == before)
        }
    }
}
