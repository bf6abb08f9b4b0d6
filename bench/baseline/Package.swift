// swift-tools-version:6.2
import PackageDescription
let package = Package(name: "baseline", platforms: [.macOS(.v14)],
  dependencies: [.package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
                 .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0")],
  targets: [.executableTarget(name: "baseline", dependencies: [.product(name: "Hummingbird", package: "hummingbird"), .product(name: "NIOPosix", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio")])])
