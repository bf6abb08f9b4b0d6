import Database
import Logging
import Weather

extension WeatherService {
    /// The weather service `WEATHER_PROVIDER`, `WEATHER_BASE_URL`, the provider keys, `WEATHER_TTL_SECONDS` and the
    /// upstream budget (`WEATHER_COLD_PER_MINUTE` per client unless `RATE_LIMITS=off`, `WEATHER_UPSTREAM_PER_MINUTE`)
    /// describe.
    public static func make(
        configuration: AppConfiguration, regions: RegionStore, database: PostgresPool, logger: Logger, observer: (@Sendable (Event) -> Void)? = nil
    ) -> WeatherService {
        let provider = provider(
            named: configuration.weatherProvider,
            baseURL: configuration.weatherBaseURL,
            openWeatherMapAPIKey: configuration.openWeatherMapAPIKey,
            kmaServiceKey: configuration.kmaServiceKey
        )
        return WeatherService(
            provider: provider,
            regions: regions,
            database: database,
            configuration: .init(ttlSeconds: configuration.weatherTTLSeconds),
            logger: logger,
            observer: observer,
            budget: RateLimitedUpstreamBudget(
                database: database,
                coldPerMinute: configuration.weatherColdPerMinute,
                upstreamPerMinute: configuration.weatherUpstreamPerMinute,
                clientLimitsEnabled: configuration.rateLimitsEnabled
            )
        )
    }
}
