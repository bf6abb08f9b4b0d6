import Weather

extension APIError {
    /// The contract's status and code for each reason current weather could not be had (CONTRACT §6). The one
    /// mapping: `RequestEnvelopeMiddleware` applies it to whatever a route throws.
    init(_ error: WeatherError) {
        switch error {
        case .unknownRegion:
            self = .notFound("region")
        case .unavailable(let reason, let retryAfter):
            self.init(.serviceUnavailable, "weather_unavailable", reason, retryAfter: retryAfter)
        case .rateLimited(let seconds):
            self.init(.tooManyRequests, "rate_limited", "too many requests for uncached weather; try again in \(seconds) s", retryAfter: seconds)
        }
    }
}
