import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization
import Weather

/// A fake weather API on 127.0.0.1 and an ephemeral port, answering like open-meteo (`/v1/forecast`),
/// OpenWeatherMap (`/data/3.0/onecall`) and KMA (`/kma/getUltraSrtNcst`, `/kma/getUltraSrtFcst`) with
/// recorded bodies, so the real libcurl path runs. Its behaviour is switched by `mode`; it counts calls.
final class FakeWeatherAPI: Sendable {
    enum Mode: Sendable {
        case ok
        case status(Int)
        /// Answers this status with this `Retry-After` (none when nil).
        case throttled(status: Int, retryAfter: String?)
        case garbage
        /// Signals `arrived` when a request comes in, then answers once `gate` opens: a slow provider whose answer
        /// the test releases while the request is known to be waiting.
        case held(Gate, arrived: Arrivals)
        /// Holds every request until `gate` opens.
        case gated
    }

    /// The routes whose answer a test may replace.
    enum Route: Sendable, Hashable {
        case openMeteo, openWeatherMap, kmaNowcast, kmaForecast
    }

    private struct State {
        var mode: Mode = .ok
        var calls: [String] = []
        var weatherCode = 61
        var bodies: [Route: String] = [:]
        var port = 0
    }

    private let state = Mutex(State())
    let gate = Gate()

    private(set) var port: Int {
        get { state.withLock { $0.port } }
        set { state.withLock { $0.port = newValue } }
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    var mode: Mode {
        get { state.withLock { $0.mode } }
        set { state.withLock { $0.mode = newValue } }
    }

    /// The WMO code the open-meteo answer reports.
    var weatherCode: Int {
        get { state.withLock { $0.weatherCode } }
        set { state.withLock { $0.weatherCode = newValue } }
    }

    /// Replaces the recorded answer of `route` (nil restores it).
    func setBody(_ body: String?, for route: Route) {
        state.withLock { $0.bodies[route] = body }
    }

    private func body(_ route: Route, _ recorded: String) -> String {
        state.withLock { $0.bodies[route] } ?? recorded
    }

    /// Paths with query of every request received.
    var calls: [String] { state.withLock { $0.calls } }
    var callCount: Int { state.withLock { $0.calls.count } }

    private func record(_ request: Request) -> Mode {
        state.withLock { state in
            state.calls.append(request.uri.description)
            return state.mode
        }
    }

    private func answer(_ request: Request, body: @escaping @Sendable () -> String) async throws -> Response {
        switch record(request) {
        case .ok:
            break
        case .status(let code):
            return Response(status: .init(code: code), body: .init(byteBuffer: ByteBuffer(string: #"{"error":true,"reason":"boom"}"#)))
        case .throttled(let code, let retryAfter):
            var headers: HTTPFields = [.contentType: "application/json"]
            if let retryAfter { headers[.retryAfter] = retryAfter }
            return Response(status: .init(code: code), headers: headers, body: .init(byteBuffer: ByteBuffer(string: #"{"error":true}"#)))
        case .garbage:
            return Self.json(#"{"current": {"time": "#)
        case .held(let gate, let arrived):
            arrived.signal()
            await gate.wait()
        case .gated:
            await gate.wait()
        }
        return Self.json(body())
    }

    static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("v1/forecast") { request, _ in
            try await self.answer(request) { self.body(.openMeteo, RecordedBodies.openMeteo(weatherCode: self.weatherCode)) }
        }
        router.get("data/3.0/onecall") { request, _ in
            try await self.answer(request) { self.body(.openWeatherMap, RecordedBodies.openWeatherMap) }
        }
        router.get("kma/getUltraSrtNcst") { request, _ in
            try await self.answer(request) { self.body(.kmaNowcast, RecordedBodies.kmaNowcast) }
        }
        router.get("kma/getUltraSrtFcst") { request, _ in
            try await self.answer(request) { self.body(.kmaForecast, RecordedBodies.kmaForecast) }
        }
        return router
    }

    /// Runs the fake for the duration of `body`.
    static func with<T: Sendable>(_ body: @Sendable (FakeWeatherAPI) async throws -> T) async throws -> T {
        let fake = FakeWeatherAPI()
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: fake.router(),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: testLogger
        )
        let group = ServiceGroup(configuration: .init(services: [.init(service: app)], logger: testLogger))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                await group.triggerGracefulShutdown()
                throw TestFailure("fake weather API did not start")
            }
            fake.port = port
            defer { fake.gate.open() }
            do {
                let value = try await body(fake)
                fake.gate.open()
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return value
            } catch {
                fake.gate.open()
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }
}

/// A one-shot gate: `wait()` suspends until `open()`.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiting = state.withLock { state in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        waiting.forEach { $0.resume() }
    }
}

/// A settable clock for cache expiry without sleeping.
final class ManualClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_795_340_400))  // 2026-11-22T09:40:00Z, just after the recorded observations

    var now: Date { current.withLock { $0 } }

    func advance(seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// Answers recorded from the real APIs (values changed, shapes kept).
enum RecordedBodies {
    static func openMeteo(weatherCode: Int) -> String {
        """
        {"latitude":37.55,"longitude":127.0,"generationtime_ms":0.06,"utc_offset_seconds":32400,"timezone":"Asia/Seoul",
         "timezone_abbreviation":"KST","elevation":38.0,
         "current_units":{"time":"iso8601","interval":"seconds","temperature_2m":"°C","wind_speed_10m":"m/s"},
         "current":{"time":"2026-11-22T18:30","interval":900,"temperature_2m":10.0,"relative_humidity_2m":61,
         "apparent_temperature":8.5,"weather_code":\(weatherCode),"cloud_cover":100,"pressure_msl":1021.7,"wind_speed_10m":5.0,"uv_index":1.25}}
        """
    }

    static let openWeatherMap = """
        {"lat":37.5665,"lon":126.978,"timezone":"Asia/Seoul","timezone_offset":32400,
         "current":{"dt":1795339800,"sunrise":1795298000,"sunset":1795334000,"temp":2.1,"feels_like":-1.5,"pressure":1024,
         "humidity":55,"dew_point":-5.2,"uvi":0.3,"clouds":40,"visibility":10000,"wind_speed":3.6,"wind_deg":320,
         "weather":[{"id":802,"main":"Clouds","description":"scattered clouds","icon":"03n"}]}}
        """

    static let kmaNowcast = """
        {"response":{"header":{"resultCode":"00","resultMsg":"NORMAL_SERVICE"},"body":{"dataType":"JSON","items":{"item":[
        {"baseDate":"20261122","baseTime":"1800","category":"PTY","nx":60,"ny":127,"obsrValue":"3"},
        {"baseDate":"20261122","baseTime":"1800","category":"REH","nx":60,"ny":127,"obsrValue":"80"},
        {"baseDate":"20261122","baseTime":"1800","category":"RN1","nx":60,"ny":127,"obsrValue":"강수없음"},
        {"baseDate":"20261122","baseTime":"1800","category":"T1H","nx":60,"ny":127,"obsrValue":"-1.5"},
        {"baseDate":"20261122","baseTime":"1800","category":"UUU","nx":60,"ny":127,"obsrValue":"0.5"},
        {"baseDate":"20261122","baseTime":"1800","category":"VEC","nx":60,"ny":127,"obsrValue":"250"},
        {"baseDate":"20261122","baseTime":"1800","category":"VVV","nx":60,"ny":127,"obsrValue":"-0.4"},
        {"baseDate":"20261122","baseTime":"1800","category":"WSD","nx":60,"ny":127,"obsrValue":"1.2"}]},
        "pageNo":1,"numOfRows":60,"totalCount":8}}}
        """

    static let kmaForecast = """
        {"response":{"header":{"resultCode":"00","resultMsg":"NORMAL_SERVICE"},"body":{"dataType":"JSON","items":{"item":[
        {"baseDate":"20261122","baseTime":"1730","category":"SKY","fcstDate":"20261122","fcstTime":"1800","fcstValue":"4","nx":60,"ny":127},
        {"baseDate":"20261122","baseTime":"1730","category":"SKY","fcstDate":"20261122","fcstTime":"1900","fcstValue":"1","nx":60,"ny":127},
        {"baseDate":"20261122","baseTime":"1730","category":"LGT","fcstDate":"20261122","fcstTime":"1800","fcstValue":"0","nx":60,"ny":127}]},
        "pageNo":1,"numOfRows":60,"totalCount":3}}}
        """
}
