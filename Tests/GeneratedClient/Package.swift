// swift-tools-version:6.2
// What an iOS developer does with weatherboard's API: generate a client from the served openapi.yaml with Apple's
// swift-openapi-generator (build plugin) and use it over URLSession. `ClientWalk` walks the main flows against a
// live server; `deploy/dev test` builds and runs it (scratch path `.build-generated-client`). A separate package,
// so the server's own build never compiles the generator.
import PackageDescription

let package = Package(
    name: "WeatherboardGeneratedClient",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "ClientWalk",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: [.treatAllWarnings(as: .error)],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        )
    ]
)
