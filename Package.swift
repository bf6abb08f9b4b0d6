// swift-tools-version:6.2
import PackageDescription

// Strict Swift 6 everywhere, and our own warnings are errors (dependencies are not affected).
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "weatherboard",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "weatherboard", targets: ["WeatherboardCommand"]),
        .executable(name: "weatherboard-admin", targets: ["WeatherboardAdmin"]),
        // bench/imaging/run: the image pipeline's time and memory on a directory of pictures (not shipped).
        .executable(name: "imaging-bench", targets: ["ImagingBench"]),
        // bench/push: a fake APNs that answers 200 to every push and counts them (not shipped).
        .executable(name: "fake-apns", targets: ["FakeAPNsServer"]),
    ],
    dependencies: [
        // One trait only: SwiftPM 6.3 shuffles several trait flags and recompiles everything (PITFALLS.md).
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0", traits: ["FullFoundation"]),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        // NIOHTTPTypes: the request and response parts between Hummingbird's HTTP/1 decoder and its handlers.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.24.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        // multipart/form-data uploads, parsed as they stream in.
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.0"),
        // Property-based tests (test target only).
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // Child processes in the tests (the vips CLI for fixtures, the admin CLI): async, so no test blocks a
        // thread of Swift's cooperative pool while a child runs, and race-free descriptor handling (pipes are
        // O_CLOEXEC, the child closes the rest), so one test's pipe never leaks into another test's child.
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.5.0"),
        // The fake APNs (tests and bench only): HTTP/2 over TLS, as Apple's servers speak it.
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
    ],
    // Each target declares exactly the modules its sources import, no more and no less. Imports point only down:
    // C shims and CivilTime → adapters → Vocabulary → domain (Board, Weather) → wire and HTTP server → executables.
    targets: [
        // MARK: C shims: one Swift module imports each.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CVips", pkgConfig: "vips", providers: [.apt(["libvips-dev"])]),

        // Proleptic Gregorian arithmetic, the one copy below both Database and Vocabulary (imports nothing).
        .target(name: "CivilTime", exclude: ["README.md"], swiftSettings: swiftSettings),

        // MARK: Adapters
        .target(
            name: "Database",
            dependencies: [
                "CLibPQ", "CivilTime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CurlClient", dependencies: ["CCurl", .product(name: "NIOPosix", package: "swift-nio")], exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(name: "Hashing", dependencies: ["COpenSSL"], exclude: ["README.md"], swiftSettings: swiftSettings),
        .target(
            name: "MediaStorage",
            dependencies: ["CurlClient", "Hashing", .product(name: "NIOPosix", package: "swift-nio")],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Imaging", dependencies: ["CVips", .product(name: "NIOPosix", package: "swift-nio")], exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(name: "RateLimit", dependencies: ["Database", "Hashing"], exclude: ["README.md"], swiftSettings: swiftSettings),
        .target(name: "Push", dependencies: ["CurlClient", "Hashing"], exclude: ["README.md"], swiftSettings: swiftSettings),

        // MARK: Shared vocabulary: what Board and Weather both speak (no database, no domain)
        .target(name: "Vocabulary", dependencies: ["CivilTime", "Hashing"], exclude: ["README.md"], swiftSettings: swiftSettings),

        // MARK: Domain
        .target(
            name: "Board",
            dependencies: [
                "CivilTime", "Database", "Hashing", "Imaging", "MediaStorage", "Push", "RateLimit", "Vocabulary",
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Weather",
            dependencies: ["CivilTime", "CurlClient", "Database", "RateLimit", "Vocabulary", .product(name: "Logging", package: "swift-log")],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),

        // MARK: Wire types shared by the server and weatherboard-admin
        .target(name: "WeatherboardAPI", dependencies: ["Vocabulary"], exclude: ["README.md"], swiftSettings: swiftSettings),

        // MARK: HTTP server
        .target(
            name: "WeatherboardServer",
            dependencies: [
                "Board", "Database", "Hashing", "Imaging", "MediaStorage", "Push", "RateLimit", "Vocabulary", "Weather", "WeatherboardAPI",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            exclude: ["README.md"],
            resources: [.copy("openapi.yaml")],
            swiftSettings: swiftSettings
        ),

        // MARK: Executables
        .executableTarget(
            name: "WeatherboardCommand",
            dependencies: [
                "WeatherboardServer", "Board", "Database", "Push", "Weather", "RateLimit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "WeatherboardAdmin",
            dependencies: [
                "WeatherboardAPI", "Vocabulary", "CurlClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),

        // MARK: Measurements (bench/)
        .executableTarget(name: "ImagingBench", dependencies: ["Imaging"], path: "bench/imaging", exclude: ["run"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "FakeAPNsServer", dependencies: ["FakeAPNs", "Hashing"], path: "bench/push/fake-apns", swiftSettings: swiftSettings
        ),

        // MARK: Test support
        // A fake APNs over real HTTP/2 and TLS with its own certificate authority: checks requests as Apple does and
        // answers what a test's script says (PushTests, bench/push).
        .target(
            name: "FakeAPNs",
            dependencies: [
                "Hashing",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            path: "Tests/FakeAPNs",
            exclude: ["README.md"],
            swiftSettings: swiftSettings
        ),

        // MARK: Tests (real PostgreSQL, real libcurl)
        // The domain's decisions without the HTTP server (the live board's: who receives which event, rendered how).
        .testTarget(name: "BoardTests", dependencies: ["Board", "Vocabulary"], swiftSettings: swiftSettings),
        .testTarget(name: "PushTests", dependencies: ["Push", "Hashing", "FakeAPNs", "CurlClient"], swiftSettings: swiftSettings),
        .testTarget(
            name: "DatabaseTests",
            dependencies: ["Database", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "WeatherTests",
            dependencies: ["Vocabulary", "Weather", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "WeatherboardServerTests",
            dependencies: [
                "WeatherboardServer", "WeatherboardAPI", "Database", "CurlClient", "Board", "Vocabulary", "Weather", "RateLimit", "MediaStorage",
                "FakeAPNs", "Hashing", "Push",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        // The same behaviour suite against both media stores: a directory, and a real S3 stand-in started by
        // `deploy/dev test` (moto, which checks signatures there).
        .testTarget(
            name: "MediaStorageTests",
            dependencies: [
                "MediaStorage", "CurlClient", "Hashing",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Real libvips on images the tests make with the vips CLI, heif-enc and exiftool.
        .testTarget(
            name: "ImagingTests",
            dependencies: [
                "Imaging",
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            exclude: ["blurhash_reference.py", "blurhash-reference.sh"],
            swiftSettings: swiftSettings
        ),
        // Parsers of outside bytes (cursors, tokens, base64, stored password hashes, JSON bodies through the
        // server's own decoding) against generated inputs: no database, no network.
        .testTarget(
            name: "PropertyTests",
            dependencies: [
                "Board", "Hashing", "Vocabulary", "Weather", "WeatherboardAPI", "WeatherboardServer",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
