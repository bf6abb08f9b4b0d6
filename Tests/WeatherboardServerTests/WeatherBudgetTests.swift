import CurlClient
import Database
import Foundation
import Testing
import Weather

/// Issue #13 finding 5: upstream calls are a budget, not a consequence of traffic (CONTRACT §6). Counts and
/// states only: each test has its own deployment bucket (`scope`) and client addresses, and a one-hour window so
/// nothing leaves it while the test runs.
@Suite struct WeatherBudgetTests {
    static func budget(cold: Int, upstream: Int) -> (PostgresPool) -> any UpstreamBudget {
        let scope = "test-\(UUID().uuidString)"
        return { RateLimitedUpstreamBudget(database: $0, coldPerMinute: cold, upstreamPerMinute: upstream, windowSeconds: 3600, scope: scope) }
    }

    static func randomClient() -> String { TestClient.randomAddress() }

    static func retryAfter(_ response: CurlResponse) -> Int? {
        response.headers.first { $0.0.lowercased() == "retry-after" }.flatMap { Int($0.1.trimmingCharacters(in: .whitespaces)) }
    }

    @Test func aClientWalkingColdRegionsGets429AfterExactlyTheLimit() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake, budget: Self.budget(cold: 5, upstream: 10_000))
            let regions = try await QuietRegions.take(14, from: 200, database: rig.database)
            try await rig.forget(regions)
            let warm = Array(regions[0..<2]), walk = Array(regions[2..<12]), feedRegion = regions[12], later = regions[13]
            try await withTestServer(dependencies: rig.dependencies) { server in
                // Another client warms two regions.
                let other = Self.randomClient()
                for region in warm {
                    let answer = try await server.request("GET", "/v1/regions/\(region)/weather", headers: [("X-Forwarded-For", other)])
                    #expect(answer.status == 200)
                }
                #expect(fake.callCount == 2)

                let walker = Self.randomClient()
                var statuses: [Int] = []
                for region in walk {
                    let answer = try await server.request("GET", "/v1/regions/\(region)/weather", headers: [("X-Forwarded-For", walker)])
                    statuses.append(answer.status)
                    if answer.status == 429 {
                        #expect(answer.errorCode == "rate_limited")
                        #expect((Self.retryAfter(answer) ?? 0) >= 1, "429 carries Retry-After")
                    }
                }
                #expect(statuses == Array(repeating: 200, count: 5) + Array(repeating: 429, count: 5))
                #expect(fake.callCount == 2 + 5, "exactly the limit went upstream")

                // Cached regions are never limited: the warm ones and the five it fetched.
                for region in warm + walk[0..<5] {
                    let answer = try await server.request("GET", "/v1/regions/\(region)/weather", headers: [("X-Forwarded-For", walker)])
                    #expect(answer.status == 200)
                }
                // The feed's region weather is limited the same way.
                let feed = try await server.request("GET", "/v1/feed?regionId=\(feedRegion)", headers: [("X-Forwarded-For", walker)])
                #expect(feed.status == 429)
                #expect(Self.retryAfter(feed) != nil)
                #expect(fake.callCount == 7)

                // A refusal poisons nothing: another client gets a refused region at once.
                let refused = walk[7]
                let answer = try await server.request("GET", "/v1/regions/\(refused)/weather", headers: [("X-Forwarded-For", Self.randomClient())])
                #expect(answer.status == 200)
                #expect(fake.callCount == 8)
                #expect(rig.events.count(.clientLimited(regionID: refused)) == 1)
                _ = later
            }
        }
    }

    @Test func aParallelBurstFromOneClientMakesAtMostTheLimitOfUpstreamCalls() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake, budget: Self.budget(cold: 4, upstream: 10_000))
            let regions = try await QuietRegions.take(12, from: 220, database: rig.database)
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                let client = Self.randomClient()
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for region in regions {
                        group.addTask {
                            try await server.request("GET", "/v1/regions/\(region)/weather", headers: [("X-Forwarded-For", client)]).status
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 200 }.count == 4)
                #expect(statuses.filter { $0 == 429 }.count == 8)
                #expect(fake.callCount == 4)
            }
        }
    }

    @Test func requestsJoiningOneRefreshCountOnce() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake, budget: Self.budget(cold: 1, upstream: 10_000))
            let region = try await QuietRegions.take(1, from: 240, database: rig.database)[0]
            try await rig.forget([region])
            try await withTestServer(dependencies: rig.dependencies) { server in
                let client = Self.randomClient()
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<10 {
                        group.addTask {
                            try await server.request("GET", "/v1/regions/\(region)/weather", headers: [("X-Forwarded-For", client)]).status
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses == Array(repeating: 200, count: 10), "one cold request, the rest joined it or hit the cache")
                #expect(fake.callCount == 1)
            }
        }
    }

    @Test func theDeploymentBudgetThenStaleOr503() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake, budget: Self.budget(cold: 10_000, upstream: 3))
            let regions = try await QuietRegions.take(5, from: 260, database: rig.database)
            try await rig.forget(regions)
            let (stale, a, b, cold, feedCold) = (regions[0], regions[1], regions[2], regions[3], regions[4])
            try await withTestServer(dependencies: rig.dependencies) { server in
                // Three clients, three calls: the budget.
                for region in [stale, a, b] {
                    let answer = try await server.request("GET", "/v1/regions/\(region)/weather", headers: [("X-Forwarded-For", Self.randomClient())])
                    #expect(answer.status == 200)
                }
                #expect(fake.callCount == 3)

                // Uncached: 503 with Retry-After, no call.
                let refused = try await server.request("GET", "/v1/regions/\(cold)/weather", headers: [("X-Forwarded-For", Self.randomClient())])
                #expect(refused.status == 503)
                #expect(refused.errorCode == "weather_unavailable")
                #expect((Self.retryAfter(refused) ?? 0) >= 1, "503 carries Retry-After")
                let feed = try await server.request("GET", "/v1/feed?regionId=\(feedCold)", headers: [("X-Forwarded-For", Self.randomClient())])
                #expect(feed.status == 503)
                #expect(Self.retryAfter(feed) != nil)

                // Cached regions keep answering, and cost nothing.
                for region in [a, b] {
                    #expect(try await server.request("GET", "/v1/regions/\(region)/weather").status == 200)
                }

                // Expired: its stale value.
                rig.clock.advance(seconds: 601)
                let old = try await server.request("GET", "/v1/regions/\(stale)/weather", headers: [("X-Forwarded-For", Self.randomClient())])
                #expect(old.status == 200)
                #expect(old.object["stale"] as? Bool == true)
                #expect(fake.callCount == 3, "exactly the budget went upstream")
                #expect(rig.events.count(.budgetExhausted(regionID: cold)) == 1)
            }
        }
    }

    @Test func includeWeatherCountsAgainstTheClientButNeverAnswers429() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake, budget: Self.budget(cold: 2, upstream: 10_000))
            let regions = try await QuietRegions.take(5, from: 280, database: rig.database)
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                let author = try await server.anonymousAccount()
                for region in regions[0..<4] {
                    _ = try await server.createPost(author, regionId: String(region))
                }
                let list = try await server.json("GET", "/v1/posts?authorId=\(author.id)&include=weather")
                #expect(list.status == 200)
                let regionsOfItems = list.items.compactMap { $0["region"] as? [String: Any] }
                #expect(regionsOfItems.count == 4)
                #expect(regionsOfItems.allSatisfy { $0.keys.contains("currentWeather") })
                let attached = regionsOfItems.filter { $0["currentWeather"] is [String: Any] }
                #expect(attached.count == 2, "the client's two cold requests; the others are null")
                #expect(fake.callCount == 2)

                // The list spent this client's budget: a cold region now answers 429.
                let cold = try await server.json("GET", "/v1/regions/\(regions[4])/weather")
                #expect(cold.status == 429)
                // The two it got are cached and keep coming, at no cost.
                let again = try await server.json("GET", "/v1/posts?authorId=\(author.id)&include=weather")
                #expect(again.status == 200)
                #expect(again.items.compactMap { ($0["region"] as? [String: Any])?["currentWeather"] as? [String: Any] }.count == 2)
                #expect(fake.callCount == 2)
            }
        }
    }
}
