import CurlClient
import Database
import Foundation
import Testing
import WeatherboardServer

/// CONTRACT §14's devices and settings (issue #34, first part), over HTTP against a real server and database.
@Suite("Notifications: devices and settings")
struct NotificationSettingsTests {
    /// A random APNs-shaped device token: 64 hex characters.
    static func deviceToken() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// Five PATCHes, each of another field (`concurrentPatchesAllLand`).
    nonisolated(unsafe) static let patches: [[String: Any]] = [
        ["replies": false], ["reportOutcomes": false], ["moderation": false], ["briefing": ["days": ["sat"]]],
        ["quietHours": ["start": "23:00", "end": "06:00"]],
    ]

    nonisolated(unsafe) static let device: [String: Any] = ["environment": "sandbox", "timeZone": "Asia/Seoul", "language": "en", "units": "imperial"]

    static func tokens(_ response: CurlResponse) -> [String] {
        response.items.compactMap { $0["token"] as? String }
    }

    @Test("PUSH: off (the default) starts; apns needs each APNS_* it cannot do without, named; any other value stops the start")
    func pushSetting() throws {
        #expect(try AppConfiguration(environment: [:]).push == nil)
        #expect(try AppConfiguration(environment: ["PUSH": "off"]).push == nil)
        for value in ["on", "fcm", "off\u{0}"] {
            #expect(throws: ConfigurationError.self, "\(value)") { try AppConfiguration(environment: ["PUSH": value]) }
        }
        let full = ["PUSH": "apns", "APNS_TEAM_ID": "TEAM123456", "APNS_KEY_ID": "KEY1234567", "APNS_PRIVATE_KEY_FILE": "/etc/weatherboard/AuthKey.p8", "APNS_TOPIC": "kr.weatherboard.app"]
        let push = try #require(try AppConfiguration(environment: full).push)
        #expect(push.productionURL == "https://api.push.apple.com")
        #expect(push.sandboxURL == "https://api.sandbox.push.apple.com")
        #expect(push.caFile == nil)
        for name in ["APNS_TEAM_ID", "APNS_KEY_ID", "APNS_PRIVATE_KEY_FILE", "APNS_TOPIC"] {
            var missing = full
            missing[name] = nil
            do {
                _ = try AppConfiguration(environment: missing)
                Issue.record("PUSH=apns without \(name) started")
            } catch {
                #expect("\(error)".contains(name), "\(error)")
            }
        }
    }

    @Test("a device registers (201), registers again (200), lists with every field, and deletes idempotently; its token is stored lower-cased")
    func registerListDelete() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let token = Self.deviceToken()
            let first = try await server.json("PUT", "/v1/accounts/me/devices/\(token.uppercased())", token: account.token, Self.device)
            #expect(first.status == 201, "\(first.text)")
            #expect(first.object["token"] as? String == token)
            #expect(first.object["environment"] as? String == "sandbox")
            #expect(first.object["timeZone"] as? String == "Asia/Seoul")
            #expect(first.object["language"] as? String == "en")
            #expect(first.object["units"] as? String == "imperial")
            #expect(first.object["registeredAt"] is String)
            let again = try await server.json("PUT", "/v1/accounts/me/devices/\(token)", token: account.token, ["environment": "production", "timeZone": "Europe/Berlin"])
            #expect(again.status == 200)
            #expect(again.object["environment"] as? String == "production")
            #expect(again.object["language"] as? String == "ko", "no language: the request's Accept-Language, Korean by default")
            #expect(again.object["units"] as? String == "metric")
            let list = try await server.json("GET", "/v1/accounts/me/devices", token: account.token)
            #expect(list.status == 200)
            #expect(Self.tokens(list) == [token])
            #expect(list.object["nextCursor"] is NSNull)
            #expect(try await server.json("DELETE", "/v1/accounts/me/devices/\(token)", token: account.token).status == 204)
            #expect(try await server.json("DELETE", "/v1/accounts/me/devices/\(token)", token: account.token).status == 204)
            #expect(Self.tokens(try await server.json("GET", "/v1/accounts/me/devices", token: account.token)).isEmpty)
            #expect(try await server.json("GET", "/v1/accounts/me/devices").status == 401)
            #expect(try await server.json("PUT", "/v1/accounts/me/devices/\(token)", Self.device).status == 401)
        }
    }

    @Test("a token registered by another account moves to it; the first account's delete cannot take it back")
    func tokenMovesBetweenAccounts() async throws {
        try await withTestServer { server in
            let first = try await server.anonymousAccount()
            let second = try await server.anonymousAccount()
            let token = Self.deviceToken()
            #expect(try await server.json("PUT", "/v1/accounts/me/devices/\(token)", token: first.token, Self.device).status == 201)
            #expect(try await server.json("PUT", "/v1/accounts/me/devices/\(token)", token: second.token, Self.device).status == 201)
            #expect(Self.tokens(try await server.json("GET", "/v1/accounts/me/devices", token: first.token)).isEmpty)
            #expect(Self.tokens(try await server.json("GET", "/v1/accounts/me/devices", token: second.token)) == [token])
            #expect(try await server.json("DELETE", "/v1/accounts/me/devices/\(token)", token: first.token).status == 204)
            #expect(Self.tokens(try await server.json("GET", "/v1/accounts/me/devices", token: second.token)) == [token])
        }
    }

    @Test("the same token registered by 50 accounts at once ends on exactly one of them")
    func fiftyAccountsOneToken() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            var accounts: [TestAccount] = []
            for _ in 0..<50 { accounts.append(try await server.anonymousAccount()) }
            let token = Self.deviceToken()
            let all = accounts
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for account in all {
                    group.addTask { try await server.json("PUT", "/v1/accounts/me/devices/\(token)", token: account.token, Self.device).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 201 }, "\(statuses)")
            #expect(try await server.dependencies.database.count("SELECT count(*) AS n FROM devices WHERE token = \(token)") == 1)
            var holders = 0
            for account in all where Self.tokens(try await server.json("GET", "/v1/accounts/me/devices", token: account.token)) == [token] {
                holders += 1
            }
            #expect(holders == 1)
        }
    }

    @Test("an account keeps its 10 most recently registered devices, also when 30 register at once; a list pages newest first")
    func tenDevicesAtMost() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            var tokens: [String] = []
            for _ in 0..<11 {
                let token = Self.deviceToken()
                tokens.append(token)
                #expect(try await server.json("PUT", "/v1/accounts/me/devices/\(token)", token: account.token, Self.device).status == 201)
            }
            let page = try await server.json("GET", "/v1/accounts/me/devices?limit=4", token: account.token)
            #expect(Self.tokens(page) == Array(tokens.reversed().prefix(4)))
            let cursor = try #require(page.object["nextCursor"] as? String)
            let rest = try await server.json("GET", "/v1/accounts/me/devices?limit=100&cursor=\(cursor)", token: account.token)
            #expect(Self.tokens(page) + Self.tokens(rest) == Array(tokens.reversed().prefix(10)), "the first registered was dropped")
            #expect(try await server.json("GET", "/v1/accounts/me/devices?cursor=forged", token: account.token).status == 400)

            let burst = (0..<30).map { _ in Self.deviceToken() }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for token in burst {
                    group.addTask { try await server.json("PUT", "/v1/accounts/me/devices/\(token)", token: account.token, Self.device).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 201 })
            let accountID = try #require(Int(account.id))
            #expect(try await server.dependencies.database.count("SELECT count(*) AS n FROM devices WHERE account_id = \(accountID)") == 10)
        }
    }

    @Test("bad input is 422 naming the field, and changes nothing: tokens of every wrong shape, environments, time zones, languages, units, NUL")
    func badDeviceInput() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let good = Self.deviceToken()
            let cases: [(String, [String: Any], String)] = [
                (String(good.prefix(63)), Self.device, "deviceToken"),
                (good + String(repeating: "a", count: 137), Self.device, "deviceToken"),
                (String(good.dropLast()) + "g", Self.device, "deviceToken"),
                (String(good.dropLast()) + "%00", Self.device, ""),
                (good, ["timeZone": "Asia/Seoul"], "environment"),
                (good, ["environment": "staging", "timeZone": "Asia/Seoul"], "environment"),
                (good, ["environment": "sandbox"], "timeZone"),
                (good, ["environment": "sandbox", "timeZone": "Mars/Olympus"], "timeZone"),
                (good, ["environment": "sandbox", "timeZone": "asia/seoul"], "timeZone"),
                (good, ["environment": "sandbox", "timeZone": String(repeating: "A", count: 10_000)], "timeZone"),
                (good, ["environment": "sandbox", "timeZone": "Asia/Seoul\u{0}"], "timeZone"),
                (good, ["environment": "sandbox", "timeZone": "Asia/Seoul", "language": "ja"], "language"),
                (good, ["environment": "sandbox", "timeZone": "Asia/Seoul", "units": "kelvin"], "units"),
            ]
            for (token, body, field) in cases {
                let response = try await server.json("PUT", "/v1/accounts/me/devices/\(token)", token: account.token, body)
                if field.isEmpty {
                    #expect(response.status == 400 || response.status == 422, "\(token.suffix(6)): \(response.status)")
                } else {
                    #expect(response.status == 422, "\(field): \(response.status) \(response.text)")
                    #expect(response.errorCode == "invalid_field")
                    let message = (response.object["error"] as? [String: Any])?["message"] as? String ?? ""
                    #expect(message.hasPrefix(field), "\(message)")
                }
            }
            let huge = try await server.json("PUT", "/v1/accounts/me/devices/\(String(repeating: "a", count: 100_000))", token: account.token, Self.device)
            #expect((400..<500).contains(huge.status))
            #expect(Self.tokens(try await server.json("GET", "/v1/accounts/me/devices", token: account.token)).isEmpty)
        }
    }

    @Test("a logout removes the session's devices, an upgrade carries them to the new token, an account deletion removes them")
    func devicesFollowTheSession() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let accountID = try #require(Int(account.id))
            let token = Self.deviceToken()
            #expect(try await server.json("PUT", "/v1/accounts/me/devices/\(token)", token: account.token, Self.device).status == 201)
            let username = "dev_\(UInt32.random(in: 0...UInt32.max))"
            let upgraded = try await server.json("POST", "/v1/accounts/me/credentials", token: account.token, ["username": username, "password": "a long enough password 1"])
            #expect(upgraded.status == 200, "\(upgraded.text)")
            let newToken = try #require(upgraded.object["token"] as? String)
            #expect(Self.tokens(try await server.json("GET", "/v1/accounts/me/devices", token: newToken)) == [token], "the upgrade carries the device")
            #expect(try await server.json("DELETE", "/v1/sessions/current", token: newToken).status == 204)
            #expect(try await server.dependencies.database.count("SELECT count(*) AS n FROM devices WHERE account_id = \(accountID)") == 0, "the logout removes it")

            let other = try await server.anonymousAccount()
            let otherID = try #require(Int(other.id))
            #expect(try await server.json("PUT", "/v1/accounts/me/devices/\(Self.deviceToken())", token: other.token, Self.device).status == 201)
            #expect(try await server.json("PATCH", "/v1/accounts/me/notifications", token: other.token, ["replies": false]).status == 200)
            #expect(try await server.json("DELETE", "/v1/accounts/me", token: other.token).status == 204)
            #expect(try await server.dependencies.database.count("SELECT count(*) AS n FROM devices WHERE account_id = \(otherID)") == 0)
            #expect(try await server.dependencies.database.count("SELECT count(*) AS n FROM notification_settings WHERE account_id = \(otherID)") == 0)
        }
    }

    @Test("settings: the defaults, a partial PATCH, the briefing and quiet hours, null ends quiet hours; the whole object every time")
    func settingsRoundTrip() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let defaults = try await server.json("GET", "/v1/accounts/me/notifications", token: account.token)
            #expect(defaults.status == 200)
            #expect(defaults.object["replies"] as? Bool == true)
            #expect(defaults.object["reportOutcomes"] as? Bool == true)
            #expect(defaults.object["moderation"] as? Bool == true)
            #expect(defaults.object["quietHours"] is NSNull)
            let briefing = try #require(defaults.object["briefing"] as? [String: Any])
            #expect(briefing["enabled"] as? Bool == false)
            #expect(briefing["regionId"] is NSNull)
            #expect(briefing["time"] is NSNull)
            #expect(briefing["days"] as? [String] == ["mon", "tue", "wed", "thu", "fri", "sat", "sun"])

            let changed = try await server.json(
                "PATCH", "/v1/accounts/me/notifications", token: account.token,
                ["replies": false, "briefing": ["enabled": true, "regionId": "1835848", "time": "07:00", "days": ["sun", "mon", "mon"]],
                 "quietHours": ["start": "22:30", "end": "07:00"]]
            )
            #expect(changed.status == 200, "\(changed.text)")
            #expect(changed.object["replies"] as? Bool == false)
            #expect(changed.object["moderation"] as? Bool == true)
            let on = try #require(changed.object["briefing"] as? [String: Any])
            #expect(on["enabled"] as? Bool == true)
            #expect(on["regionId"] as? String == "1835848")
            #expect(on["time"] as? String == "07:00")
            #expect(on["days"] as? [String] == ["mon", "sun"])
            #expect((changed.object["quietHours"] as? [String: Any])?["start"] as? String == "22:30")

            let later = try await server.json("PATCH", "/v1/accounts/me/notifications", token: account.token, ["briefing": ["time": "06:45"], "quietHours": NSNull()])
            #expect(later.status == 200)
            #expect((later.object["briefing"] as? [String: Any])?["regionId"] as? String == "1835848", "left alone")
            #expect((later.object["briefing"] as? [String: Any])?["time"] as? String == "06:45")
            #expect(later.object["quietHours"] is NSNull)
            #expect(later.object["replies"] as? Bool == false)
            let read = try await server.json("GET", "/v1/accounts/me/notifications", token: account.token)
            #expect(read.text == later.text)
        }
    }

    @Test("bad settings are 422 naming the field (404 for an unknown region), and one bad value changes nothing")
    func badSettings() async throws {
        try await withTestServer { server in
            let account = try await server.anonymousAccount()
            let cases: [([String: Any], Int, String)] = [
                (["briefing": ["time": "7:00"]], 422, "briefing.time"),
                (["briefing": ["time": "24:00"]], 422, "briefing.time"),
                (["briefing": ["time": "07:60"]], 422, "briefing.time"),
                (["briefing": ["time": "07:00:00"]], 422, "briefing.time"),
                (["briefing": ["time": "０７:００"]], 422, "briefing.time"),
                (["briefing": ["days": ["mon", "funday"]]], 422, "briefing.days"),
                (["briefing": ["days": ["MON"]]], 422, "briefing.days"),
                (["briefing": ["enabled": true]], 422, "briefing.regionId"),
                (["briefing": ["enabled": true, "regionId": "1835848"]], 422, "briefing.time"),
                (["quietHours": ["start": "25:00", "end": "07:00"]], 422, "quietHours.start"),
                (["quietHours": ["start": "22:00"]], 422, "quietHours.end"),
                (["quietHours": ["start": "22:00", "end": "22:00"]], 422, "quietHours.end"),
                (["replies": false, "briefing": ["regionId": "999999999"]], 404, ""),
                (["replies": false, "briefing": ["regionId": "01835848"]], 404, ""),
                (["replies": false, "briefing": ["time": "07:00\u{0}"]], 422, ""),
            ]
            for (body, status, field) in cases {
                let response = try await server.json("PATCH", "/v1/accounts/me/notifications", token: account.token, body)
                #expect(response.status == status, "\(body): \(response.status) \(response.text)")
                if !field.isEmpty {
                    let message = (response.object["error"] as? [String: Any])?["message"] as? String ?? ""
                    #expect(message.hasPrefix(field), "\(body): \(message)")
                }
            }
            let after = try await server.json("GET", "/v1/accounts/me/notifications", token: account.token)
            #expect(after.object["replies"] as? Bool == true, "nothing changed")
            #expect(try await server.json("PATCH", "/v1/accounts/me/notifications", ["replies": false]).status == 401)
        }
    }

    @Test("20 partial PATCHes at once, each of another field, all land")
    func concurrentPatchesAllLand() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let account = try await server.anonymousAccount()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for round in 0..<4 {
                    for index in Self.patches.indices {
                        group.addTask {
                            let response = try await server.json("PATCH", "/v1/accounts/me/notifications", token: account.token, Self.patches[index])
                            #expect(response.status == 200, "round \(round): \(response.text)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            let settings = try await server.json("GET", "/v1/accounts/me/notifications", token: account.token)
            #expect(settings.object["replies"] as? Bool == false)
            #expect(settings.object["reportOutcomes"] as? Bool == false)
            #expect(settings.object["moderation"] as? Bool == false)
            #expect((settings.object["briefing"] as? [String: Any])?["days"] as? [String] == ["sat"])
            #expect((settings.object["quietHours"] as? [String: Any])?["end"] as? String == "06:00")
        }
    }
}
