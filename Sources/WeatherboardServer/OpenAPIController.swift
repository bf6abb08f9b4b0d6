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

    /// Finds `openapi.yaml`: in SwiftPM's resource bundle next to the executable, in
    /// `<prefix>/share/weatherboard/`, or in a source checkout above the executable.
    static func loadDocument() -> ByteBuffer {
        let executable = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        let directory = executable.deletingLastPathComponent()
        var candidates = [
            directory.appendingPathComponent("weatherboard_WeatherboardServer.resources/openapi.yaml"),
            directory.deletingLastPathComponent().appendingPathComponent("share/weatherboard/openapi.yaml"),
        ]
        var up = directory
        for _ in 0..<6 {
            candidates.append(up.appendingPathComponent("Sources/WeatherboardServer/openapi.yaml"))
            up = up.deletingLastPathComponent()
        }
        for candidate in candidates {
            if let data = FileManager.default.contents(atPath: candidate.path) {
                return ByteBuffer(bytes: data)
            }
        }
        return ByteBuffer(string: "openapi: 3.1.0\ninfo: {title: weatherboard, version: unknown}\npaths: {}\n")
    }
}
