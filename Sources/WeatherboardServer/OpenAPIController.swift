import Foundation
import Hummingbird
import NIOCore

/// Serves this server's `openapi.yaml`, read once at start-up.
struct OpenAPIController {
    let document: ByteBuffer

    var endpoints: RouteCollection<AppRequestContext> {
        let routes = RouteCollection(context: AppRequestContext.self)
        let document = self.document
        routes.get("openapi.yaml") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"], body: .init(byteBuffer: document))
        }
        return routes
    }

    /// `openapi.yaml` from SwiftPM's resource bundle, `Bundle.module`: `weatherboard_WeatherboardServer.resources/`
    /// next to the binary (installed with it, deploy/OPERATIONS.md §1), or in the build directory. Read once at
    /// start-up: a server installed without its bundle stops there, with SwiftPM's message naming both places
    /// it looked, rather than serving a wrong document later.
    static func loadDocument() -> ByteBuffer {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml"),
            let data = FileManager.default.contents(atPath: url.path)
        else {
            fatalError("openapi.yaml is missing from the resource bundle \(Bundle.module.bundlePath)")
        }
        return ByteBuffer(bytes: data)
    }
}
