import Weather

extension WeatherRequester {
    /// The client of `context`, by the address the server computes for rate limits.
    init(_ context: AppRequestContext) {
        self.init(clientAddress: context.clientIP)
    }
}
