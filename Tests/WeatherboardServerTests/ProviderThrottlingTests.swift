import CurlClient
import Database
import Foundation
import RateLimit
import Testing
import Weather

/// Issue #19 point 6: a provider that says "too many requests" is left alone for as long as it asked, and every
/// upstream HTTP request counts against `WEATHER_UPSTREAM_PER_MINUTE` (KMA's two per observation, a retry). Over
/// loopback against the fake provider, on the rig's manual clock: counts of upstream requests, no sleeps.
@Suite struct ProviderThrottlingTests {
    static func retryAfter(_ response: CurlResponse) -> Int? {
        response.header("Retry-After").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// Before the fix: the 429 was retried at once (2 upstream requests), and the next region went upstream again.
    @Test func a429WithRetryAfterIsNotRetriedAndHoldsEveryCallForThatLong() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let regions = try await QuietRegions.take(3, from: 290, database: rig.database)
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                fake.mode = .throttled(status: 429, retryAfter: "60")
                let refused = try await server.json("GET", "/v1/regions/\(regions[0])/weather")
                #expect(refused.status == 503)
                #expect(refused.errorCode == "weather_unavailable")
                #expect(Self.retryAfter(refused) == 60)
                #expect(fake.callCount == 1, "a 429 is not retried at once")

                // The provider is fine again, but asked for 60 s: no region goes upstream before then.
                fake.mode = .ok
                let held = try await server.json("GET", "/v1/regions/\(regions[1])/weather")
                #expect(held.status == 503)
                #expect(Self.retryAfter(held) == 60)
                rig.clock.advance(seconds: 59)
                let stillHeld = try await server.json("GET", "/v1/regions/\(regions[2])/weather")
                #expect(stillHeld.status == 503)
                #expect(Self.retryAfter(stillHeld) == 1)
                #expect(fake.callCount == 1, "nothing upstream until the time the provider asked for")

                rig.clock.advance(seconds: 1)
                let after = try await server.json("GET", "/v1/regions/\(regions[2])/weather")
                #expect(after.status == 200)
                #expect(fake.callCount == 2)
                #expect(try await server.json("GET", "/v1/regions/\(regions[1])/weather").status == 200)
                #expect(fake.callCount == 3)
            }
        }
    }

    /// A 503 with Retry-After is a request to wait too; a 503 without one is retried once, as before. A Retry-After
    /// past `maxProviderHold` holds calls for that long only. Before the fix: 2 requests for the first 503.
    @Test func a503WithRetryAfterWaitsAndAHugeRetryAfterIsBounded() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake) { $0.maxProviderHold = 300 }
            let regions = try await QuietRegions.take(3, from: 293, database: rig.database)
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                fake.mode = .throttled(status: 503, retryAfter: "86400")
                let refused = try await server.json("GET", "/v1/regions/\(regions[0])/weather")
                #expect(refused.status == 503)
                #expect(Self.retryAfter(refused) == 300, "bounded by maxProviderHold")
                #expect(fake.callCount == 1, "a 503 with Retry-After is not retried at once")

                fake.mode = .ok
                rig.clock.advance(seconds: 299)
                #expect(try await server.json("GET", "/v1/regions/\(regions[1])/weather").status == 503)
                #expect(fake.callCount == 1)
                rig.clock.advance(seconds: 1)
                #expect(try await server.json("GET", "/v1/regions/\(regions[1])/weather").status == 200)
                #expect(fake.callCount == 2)

                // Without Retry-After a 503 is an ordinary failure: retried once.
                fake.mode = .throttled(status: 503, retryAfter: nil)
                #expect(try await server.json("GET", "/v1/regions/\(regions[2])/weather").status == 503)
                #expect(fake.callCount == 4)
            }
        }
    }

    /// A 429 without Retry-After is not retried either; it holds calls for `breakerCooldown`.
    @Test func a429WithoutRetryAfterHoldsForTheBreakerCooldown() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake) { $0.breakerCooldown = 45 }
            let regions = try await QuietRegions.take(2, from: 296, database: rig.database)
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                fake.mode = .throttled(status: 429, retryAfter: "soon")
                let refused = try await server.json("GET", "/v1/regions/\(regions[0])/weather")
                #expect(refused.status == 503)
                #expect(Self.retryAfter(refused) == 45)
                #expect(fake.callCount == 1)
                fake.mode = .ok
                rig.clock.advance(seconds: 44)
                #expect(try await server.json("GET", "/v1/regions/\(regions[1])/weather").status == 503)
                rig.clock.advance(seconds: 1)
                #expect(try await server.json("GET", "/v1/regions/\(regions[1])/weather").status == 200)
                #expect(fake.callCount == 2)
            }
        }
    }

    /// KMA sends two requests per observation: both count. With a budget of 3, one observation fits and the next
    /// does not (it would make 4). Before the fix: the second went out too (4 upstream requests, the bucket
    /// counting 2).
    @Test func kmaCountsBothOfItsRequestsAgainstTheDeploymentBudget() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let scope = "test-\(UUID().uuidString)"
            let budget: (PostgresPool) -> any UpstreamBudget = {
                RateLimitedUpstreamBudget(database: $0, coldPerMinute: 10_000, upstreamPerMinute: 3, windowSeconds: 3600, scope: scope)
            }
            let rig = WeatherTestRig.make(provider: "kma", fake: fake, budget: budget)
            let regions = try await QuietRegions.take(2, from: 298, database: rig.database)
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                #expect(try await server.json("GET", "/v1/regions/\(regions[0])/weather").status == 200)
                #expect(fake.callCount == 2)
                let refused = try await server.json("GET", "/v1/regions/\(regions[1])/weather")
                #expect(refused.status == 503)
                #expect(refused.errorCode == "weather_unavailable")
                #expect(fake.callCount == 2, "the budget had room for one request, not the two an observation needs")
                let policy = RateLimitPolicy(name: "weather-upstream", limit: 3, windowSeconds: 3600)
                #expect(try await RateLimiter(database: rig.database).count(policy, subject: scope) == 2)
            }
        }
    }

    /// A retry is an upstream request: with one request left in the budget, a 500 is not retried. Before the fix:
    /// the retry went out past the budget (2 upstream requests, the bucket counting 1).
    @Test func aRetryNeedsTheBudgetToo() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let scope = "test-\(UUID().uuidString)"
            let budget: (PostgresPool) -> any UpstreamBudget = {
                RateLimitedUpstreamBudget(database: $0, coldPerMinute: 10_000, upstreamPerMinute: 3, windowSeconds: 3600, scope: scope)
            }
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake, budget: budget)
            let regions = try await QuietRegions.take(2, from: 300, database: rig.database)
            try await rig.forget(regions)
            try await withTestServer(dependencies: rig.dependencies) { server in
                fake.mode = .status(500)
                // 1 + its retry: 2 of 3.
                let first = try await server.json("GET", "/v1/regions/\(regions[0])/weather")
                #expect(first.status == 503)
                #expect(fake.callCount == 2)
                // 1 more: the budget's last; its retry is refused.
                let second = try await server.json("GET", "/v1/regions/\(regions[1])/weather")
                #expect(second.status == 503)
                #expect(fake.callCount == 3, "the retry did not go out past the budget")
                let policy = RateLimitPolicy(name: "weather-upstream", limit: 3, windowSeconds: 3600)
                let counted = try await RateLimiter(database: rig.database).count(policy, subject: scope)
                #expect(counted == 3)
            }
        }
    }
}
