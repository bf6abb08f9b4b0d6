import CurlClient
import Foundation
import Testing
import Weather

/// The cache: single flight, stale-if-error, 503, the shared table, the circuit breaker, provider failures.
@Suite struct WeatherCacheTests {
    @Test func singleFlightWith50ConcurrentRequests() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            // The rig's long timeout holds the answer while 50 requests arrive on a busy machine.
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let ulsan = 1833747
            try await rig.forget([ulsan])
            fake.mode = .gated
            // 50 requests held at once need 50 client threads (the shared test client has 16).
            let client = CurlHTTPClient(threads: 50)
            defer { Task { await client.shutdown() } }
            try await withTestServer(dependencies: rig.dependencies) { server in
                let url = server.baseURL + "/v1/regions/\(ulsan)/weather"
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<50 {
                        group.addTask { try await client.send(CurlRequest(url: url, timeoutMilliseconds: 60_000)).status }
                    }
                    // Hold the one upstream answer until the other 49 requests are waiting on it.
                    let allWaiting = await rig.events.wait { events in
                        events.contains(.upstreamCall(regionID: ulsan)) && events.filter { $0 == .joinedInFlight(regionID: ulsan) }.count >= 49
                    }
                    #expect(allWaiting, "49 requests should be waiting on the one upstream call")
                    fake.gate.open()
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.count == 50)
                #expect(statuses.allSatisfy { $0 == 200 })
                #expect(fake.callCount == 1)
                #expect(rig.events.count(.upstreamCall(regionID: ulsan)) == 1)
            }
        }
    }

    @Test func staleIfErrorAnd503() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let suwon = 1835553
            let gwangju = 1841811
            try await rig.forget([suwon, gwangju])
            try await withTestServer(dependencies: rig.dependencies) { server in
                let fresh = try await server.json("GET", "/v1/regions/\(suwon)/weather")
                #expect(fresh.status == 200)
                #expect(fresh.object["stale"] as? Bool == false)
                #expect(fake.callCount == 1)

                // Within the TTL: served from memory.
                rig.clock.advance(seconds: 599)
                _ = try await server.json("GET", "/v1/regions/\(suwon)/weather")
                #expect(fake.callCount == 1)

                // Expired, provider down: the last value, stale.
                rig.clock.advance(seconds: 2)
                fake.mode = .status(500)
                let stale = try await server.json("GET", "/v1/regions/\(suwon)/weather")
                #expect(stale.status == 200)
                #expect(stale.object["stale"] as? Bool == true)
                #expect(stale.object["temperature"] as? Double == 10)
                #expect(stale.object["fetchedAt"] as? String == fresh.object["fetchedAt"] as? String)
                #expect(fake.callCount == 3, "one call and one retry")

                // Stale answers do not hammer the provider.
                _ = try await server.json("GET", "/v1/regions/\(suwon)/weather")
                #expect(fake.callCount == 3)

                // Nothing cached and the provider fails: 503.
                let cold = try await server.json("GET", "/v1/regions/\(gwangju)/weather")
                #expect(cold.status == 503)
                #expect(cold.errorCode == "weather_unavailable")

                // The provider is back: fresh again after the back-off.
                fake.mode = .ok
                fake.weatherCode = 0
                rig.clock.advance(seconds: 31)
                let recovered = try await server.json("GET", "/v1/regions/\(suwon)/weather")
                #expect(recovered.object["stale"] as? Bool == false)
                #expect(recovered.object["weatherType"] as? String == "clearSky")
            }
        }
    }

    @Test func sharedTableSurvivesRestarts() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let first = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            let incheon = 1843564
            try await first.forget([incheon])
            _ = try await first.service.currentWeather(regionID: incheon, units: .metric)
            #expect(fake.callCount == 1)
            first.database.shutdown()

            // A new process (fresh memory) within the TTL: read from the table, no upstream call.
            let second = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            second.clock.advance(seconds: 60)
            let weather = try await second.service.currentWeather(regionID: incheon, units: .metric)
            #expect(weather.stale == false)
            #expect(fake.callCount == 1)
            #expect(second.events.count(.databaseHit(regionID: incheon)) == 1)

            // After the TTL, provider down: the table's value, stale.
            second.clock.advance(seconds: 600)
            fake.mode = .garbage
            let third = WeatherTestRig.make(provider: "open-meteo", fake: fake)
            third.clock.advance(seconds: 700)
            let stale = try await third.service.currentWeather(regionID: incheon, units: .metric)
            #expect(stale.stale == true)
            #expect(fake.callCount == 2, "garbage is not retried")
            second.database.shutdown()
            third.database.shutdown()
        }
    }

    @Test func failureModes() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake, http: WeatherTestRig.timingOut) { $0.breakerThreshold = 100 }
            let tokyo = 1850147, paris = 2988507, jeju = 1846266, busan = 1838524
            try await rig.forget([tokyo, paris, jeju, busan])
            try await withTestServer(dependencies: rig.dependencies) { server in
                // HTTP 500: retried once, then 503.
                fake.mode = .status(500)
                let failed = try await server.json("GET", "/v1/regions/\(tokyo)/weather")
                #expect(failed.status == 503)
                #expect(failed.errorCode == "weather_unavailable")
                #expect(fake.callCount == 2)

                // Garbage JSON: not retried, 503.
                fake.mode = .garbage
                let garbage = try await server.json("GET", "/v1/regions/\(paris)/weather")
                #expect(garbage.status == 503)
                #expect(fake.callCount == 3)

                // No answer within the timeout: retried once, then 503.
                fake.mode = .gated
                let timedOut = try await server.json("GET", "/v1/regions/\(jeju)/weather")
                #expect(timedOut.status == 503)
                #expect(fake.callCount == 5)
                #expect(rig.events.count(.upstreamFailure(regionID: jeju)) == 1)

                // Slow but within the timeout: fine. The answer waits until the request has reached the provider.
                let answer = Gate(), arrived = Arrivals()
                fake.mode = .held(answer, arrived: arrived)
                let waiting = Task { try await server.json("GET", "/v1/regions/\(busan)/weather") }
                #expect(await arrived.wait(for: 1))
                answer.open()
                let slow = try await waiting.value
                #expect(slow.status == 200)
                #expect(slow.object["stale"] as? Bool == false)
            }
        }
    }

    @Test func circuitBreakerStopsCallingAFailingProvider() async throws {
        try await RegionTestCatalog.loaded.value
        try await FakeWeatherAPI.with { fake in
            let rig = WeatherTestRig.make(provider: "open-meteo", fake: fake) {
                $0.breakerThreshold = 2
                $0.breakerCooldown = 30
            }
            let london = 2643743, newYork = 5128581, berlin = 2950159
            try await rig.forget([london, newYork, berlin])
            try await withTestServer(dependencies: rig.dependencies) { server in
                fake.mode = .status(503)
                #expect(try await server.json("GET", "/v1/regions/\(london)/weather").status == 503)
                #expect(try await server.json("GET", "/v1/regions/\(newYork)/weather").status == 503)
                #expect(fake.callCount == 4)
                #expect(await rig.service.isCircuitOpen)

                // Open: no upstream call at all.
                let refused = try await server.json("GET", "/v1/regions/\(berlin)/weather")
                #expect(refused.status == 503)
                #expect(refused.errorCode == "weather_unavailable")
                #expect(fake.callCount == 4)
                #expect(rig.events.count(.circuitOpen(regionID: berlin)) == 1)

                // After the cooldown one trial goes through; its success closes the circuit.
                fake.mode = .ok
                rig.clock.advance(seconds: 31)
                #expect(try await server.json("GET", "/v1/regions/\(berlin)/weather").status == 200)
                #expect(fake.callCount == 5)
                #expect(await !rig.service.isCircuitOpen)
            }
        }
    }
}
