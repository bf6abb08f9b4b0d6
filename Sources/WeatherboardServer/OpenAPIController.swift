import Foundation
import Hummingbird
import Logging
import NIOCore

/// Serves this server's `openapi.yaml`, read once at start-up.
struct OpenAPIController {
    /// nil when the resource bundle holds no spec (an install that lost it): the route then answers 500
    /// `internal_error`, and start-up has logged why. Never an empty or made-up document.
    let document: ByteBuffer?

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        let document = self.document
        routes.get("openapi.yaml") { _, _ in
            guard let document else { throw APIError.internalError }
            return Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"], body: .init(byteBuffer: document))
        }
        return routes
    }

    /// `openapi.yaml` from SwiftPM's resource bundle, `Bundle.module`: `weatherboard_WeatherboardServer.resources/`
    /// next to the binary (installed with it, deploy/OPERATIONS.md §1), or in the build directory. A server
    /// installed without the bundle stops at start-up with SwiftPM's message naming both places it looked; a
    /// bundle without the file is logged as an error here.
    static func loadDocument(logger: Logger) -> ByteBuffer? {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let data = FileManager.default.contents(atPath: url.path)
        else {
            logger.error("openapi.yaml is missing from the resource bundle", metadata: ["bundle": "\(Bundle.module.bundlePath)"])
            return nil
        }
        return ByteBuffer(bytes: data)
    }
}
