import Database
import Hummingbird

/// `GET /metrics`: Prometheus text exposition format.
struct MetricsController {
    let metrics: AppMetrics
    let database: PostgresPool
    /// Values read at scrape time from elsewhere (the stream hub).
    var extra: [@Sendable (AppMetrics) -> Void] = []

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        routes.get("metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: metrics.render(database: database, extra: extra))
            )
        }
        return routes
    }
}
