import Board
import Foundation
import Synchronization
import Vocabulary
import Weather

/// A new post's conditions from the weather service (CONTRACT §9): the cached value when the region is fresh, or
/// the one upstream call the service makes for it, within §6's budgets (the client's cold limit and the
/// deployment's). The create waits at most `timeout`; past it the post gets no conditions, and the call goes on
/// in the service (single flight), so the region is warm for the next post. Any failure is no conditions.
public struct WeatherConditions: ConditionsSource {
    /// The provider's own total timeout (`ProviderHTTP`'s default, 5 s): a create never waits longer for weather.
    public static let defaultTimeout: Duration = .milliseconds(ProviderHTTP.defaultTimeoutMilliseconds)

    let weather: any WeatherProviding
    let timeout: Duration

    public func conditions(regionID: Int, clientAddress: String?) async -> PostConditions? {
        let weather = weather
        let requester = WeatherRequester(clientAddress: clientAddress)
        return await withCheckedContinuation { continuation in
            let answer = Once(continuation)
            let timer = Task {
                try? await Task.sleep(for: timeout)
                answer.resume(nil)
            }
            // Unstructured on purpose: the create must not wait for a call it has given up on.
            Task {
                let current = try? await weather.currentWeather(regionID: regionID, units: .metric, language: .ko, requester: requester)
                answer.resume(current.flatMap { PostConditions(weatherType: $0.weatherType, feelsLikeCelsius: $0.feelsLike, observedAt: $0.observedAt) })
                timer.cancel()
            }
        }
    }
}

/// A continuation resumed exactly once, by whichever racer comes first; later answers are dropped.
private final class Once<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(_ value: Value) {
        let first = continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
        first?.resume(returning: value)
    }
}
