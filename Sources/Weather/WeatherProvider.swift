/// One upstream weather API. Implementations are stateless apart from their configuration.
public protocol WeatherProvider: Sendable {
    /// The `provider` field of the weather object (`open-meteo`, `openweathermap`, `kma`).
    var name: String { get }
    /// How many HTTP requests one `observe` sends (retries aside), for the upstream budget.
    var requestsPerObservation: Int { get }
    /// Fetches the current observation at a region, admitting any retry through `admitRetry`. Throws `ProviderError`.
    func observe(_ region: Region, admitRetry: UpstreamAdmission?) async throws -> Observation
}

extension WeatherProvider {
    public var requestsPerObservation: Int { 1 }
}
