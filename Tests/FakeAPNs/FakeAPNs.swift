import Foundation
import Hashing
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// A fake APNs for the tests and the bench: Apple's provider API over real HTTP/2 and TLS, with a certificate
/// authority of its own (`caFile`, for `APNS_CA_FILE`).
///
/// - It checks each request as Apple does (`check`: path, method, provider token signed with the given key and at most
///   an hour old, topic, push type, `apns-id`, payload) and refuses with Apple's status and reason.
/// - A request that passes gets what the test's script answers (`script`; `.ok` unless set): a status, a reset
///   stream, a closed connection, or any of these late.
/// - It records every request with what it answered; `waitForRequests` and `waitForDelivered` return as soon as the
///   records are there (continuations resumed as they arrive; the timeout is only a failsafe).
/// - Bound: every request is kept for the fake's life (tests and benches are bounded); a body is kept up to
///   `maxKeptBodyBytes`, the rest counted and dropped.
public final class FakeAPNs: Sendable {
    /// `https://127.0.0.1:<port>`.
    public let url: String
    public let port: Int
    /// The PEM of the fake's certificate authority, which signed its server certificate.
    public let caFile: String
    let core: Core
    private let channel: any Channel
    private let directory: String

    /// Apple's payload limit for an alert.
    public static let maxPayloadBytes = 4096
    /// The most body bytes kept of one request.
    public static let maxKeptBodyBytes = 64 * 1024

    /// Makes a certificate authority and a server certificate for 127.0.0.1 and localhost, and listens on `port` (0:
    /// any free one). `now` is the clock a provider token's age is checked by (seconds since 1970). `sharingAuthorityOf`:
    /// a running fake whose certificate authority signs this one's certificate too (one `caFile` trusts both: a fake per
    /// environment); it must outlive this one.
    public static func start(
        teamID: String,
        keyID: String,
        publicKey: ES256PublicKey,
        topic: String,
        port: Int = 0,
        sharingAuthorityOf other: FakeAPNs? = nil,
        now: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }
    ) async throws -> FakeAPNs {
        let files = try await Certificates.make(authority: other?.directory)
        let tls: NIOSSLContext
        do {
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: [.certificate(try NIOSSLCertificate(bytes: files.serverCertificate, format: .pem))],
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: files.serverKey, format: .pem))
            )
            configuration.applicationProtocols = ["h2"]
            tls = try NIOSSLContext(configuration: configuration)
        } catch {
            try? await Certificates.remove(files.directory)
            throw error
        }
        let core = Core(teamID: teamID, keyID: keyID, publicKey: publicKey, topic: topic, now: now)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                let connectionID = core.connectionAccepted(channel)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    var connection = NIOHTTP2Handler.ConnectionConfiguration()
                    // Apple's servers allow 1000 streams at once on a connection.
                    connection.initialSettings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: 1000)]
                    var stream = NIOHTTP2Handler.StreamConfiguration()
                    // A test resets (and a client cancels) many streams on purpose: not an attack to stop.
                    stream.streamResetFrameRateLimit.maximumCount = 100_000
                    stream.streamErrorRateLimit.maximumCount = 100_000
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: connection, streamConfiguration: stream
                    ) { streamChannel in
                        streamChannel.eventLoop.makeCompletedFuture {
                            try streamChannel.pipeline.syncOperations.addHandler(APNsStreamHandler(core: core, connectionID: connectionID))
                        }
                    }
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(host: "127.0.0.1", port: port).get()
        } catch {
            try? await Certificates.remove(files.directory)
            throw error
        }
        let bound = channel.localAddress?.port ?? port
        return FakeAPNs(core: core, channel: channel, port: bound, caFile: files.caFile, directory: files.directory)
    }

    private init(core: Core, channel: any Channel, port: Int, caFile: String, directory: String) {
        self.core = core
        self.channel = channel
        self.port = port
        self.url = "https://127.0.0.1:\(port)"
        self.caFile = caFile
        self.directory = directory
    }

    /// Stops listening, closes the open connections and removes the certificate files.
    public func stop() async throws {
        try? await channel.close()
        core.closeConnections()
        try await Certificates.remove(directory)
    }

    /// Sets what requests that pass Apple's checks are answered (may keep state of its own, e.g. fail an `apns-id`
    /// twice, then deliver it).
    public func script(_ answer: @escaping @Sendable (Request) async -> Answer) {
        core.setScript(answer)
    }

    /// Every request so far, in arrival order.
    public var requests: [Request] { core.snapshot().requests }
    /// The requests answered 200.
    public var delivered: [Request] { core.snapshot().requests.filter { $0.answeredStatus == 200 } }
    /// TCP connections accepted so far.
    public var connectionsAccepted: Int { core.snapshot().connections }
    /// The distinct provider tokens seen so far.
    public var distinctJWTs: Set<String> { Set(core.snapshot().requests.compactMap(\.jwt)) }

    /// The first `count` requests, as soon as that many arrived; throws `Timeout` after `timeout` (a failsafe).
    public func waitForRequests(count: Int, timeout: Duration = .seconds(30)) async throws -> [Request] {
        try await core.wait(count: count, deliveredOnly: false, timeout: timeout)
    }

    /// The first `count` requests answered 200, as soon as there are that many; throws `Timeout` after `timeout`.
    public func waitForDelivered(count: Int, timeout: Duration = .seconds(30)) async throws -> [Request] {
        try await core.wait(count: count, deliveredOnly: true, timeout: timeout)
    }

    /// A wait ran out: what was wanted and what there was.
    public struct Timeout: Error, CustomStringConvertible {
        public var wanted: Int
        public var had: Int
        public var description: String { "FakeAPNs: waited for \(wanted) requests, had \(had)" }
    }
}
