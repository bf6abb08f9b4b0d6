import Testing

/// The three routes that read the weather outside a region (`sort=fit` on `GET /v1/posts`, the feed, the outfit guide)
/// ask `WeatherProviding.outside` and answer its failures alike (CONTRACT §6, §9).
@Suite("Weather outside, by route")
struct WeatherOutsideRoutesTests {
    @Test("no weather is 503 weather_unavailable, an unknown region 404, and fit without a place 400, on every route")
    func errors() async throws {
        try await withTestServer { server in  // WEATHER_PROVIDER=none
            for path in ["/v1/posts?sort=fit&regionId=1835848", "/v1/feed?regionId=1835848", "/v1/regions/1835848/outfit",
                         "/v1/outfit?lat=37.5665&lon=126.978"]
            {
                let response = try await server.json("GET", path)
                #expect(response.status == 503 && response.errorCode == "weather_unavailable", "\(path): \(response.text)")
            }
            for path in ["/v1/posts?sort=fit&regionId=999999999", "/v1/feed?regionId=999999999", "/v1/regions/999999999/outfit"] {
                let response = try await server.json("GET", path)
                #expect(response.status == 404 && response.errorCode == "not_found", "\(path): \(response.text)")
            }
            let noPlace = try await server.json("GET", "/v1/posts?sort=fit")
            #expect(noPlace.status == 400 && noPlace.errorCode == "bad_request", "\(noPlace.text)")
        }
    }
}
