/// The admission of an upstream request that a provider decides to make on its own, past the ones `WeatherService`
/// admitted before the call (`ProviderHTTP`'s one retry). `WeatherService` sets it for the duration of one
/// observation, so every HTTP request a provider sends is counted against `WEATHER_UPSTREAM_PER_MINUTE`; nil (no
/// budget) lets the retry go.
enum UpstreamAdmission {
    /// Counts one more upstream request, or throws (counting nothing) when the deployment's budget is spent.
    @TaskLocal static var retry: (@Sendable () async throws -> Void)?
}
