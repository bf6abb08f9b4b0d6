import Vocabulary
import Weather

extension CurrentWeather {
    /// The feels-like band of this weather (shown in `units`), decided in °C, for the outfit guide and `sort=fit`. The
    /// provider's values are checked before they are cached, so a weather object always has a finite feels-like;
    /// none is 503 `weather_unavailable`.
    func band(units: Units) throws -> FeelsLikeBand {
        guard let band = FeelsLikeBand(feelsLike: feelsLike, units: units) else {
            throw APIError(WeatherError.unavailable("the weather has no feels-like temperature", retryAfterSeconds: nil))
        }
        return band
    }
}
