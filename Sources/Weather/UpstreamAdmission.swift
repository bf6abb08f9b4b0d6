/// The admission of an upstream request that a provider decides to make on its own, past the ones `WeatherService`
/// admitted before the call (`ProviderHTTP`'s one retry): counts one more upstream request, or throws (counting
/// nothing) when the deployment's budget is spent. `WeatherService` passes it to each observation, so every HTTP request
/// a provider sends is counted against `WEATHER_UPSTREAM_PER_MINUTE`; nil (no budget) lets the retry go. It is an
/// argument, not a task-local value: `TaskLocal.withValue` around the provider call crashed the server in
/// `swift_task_localValuePush` under the scale bench's feed load (Swift 6.3.1, release build).
public typealias UpstreamAdmission = @Sendable () async throws -> Void
