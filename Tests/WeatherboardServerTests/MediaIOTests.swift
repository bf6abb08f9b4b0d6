import Foundation
import MediaStorage
import NIOCore
import NIOPosix
import Testing
import WeatherboardServer

/// The media store does its blocking I/O on threads of its own (`MediaIO`), never on `NIOThreadPool.singleton`,
/// which NIO's `FileSystem.shared` uses for upload temp files.
@Suite("Media I/O threads")
struct MediaIOTests {
    @Test("with the S3 endpoint hung, uploads' PUTs holding threads, another upload still writes its temp file and gets its answer")
    func stalledBucketStallsNoUpload() async throws {
        let bucket = try await StalledServer.start()
        let storage = try MediaStorageConfiguration(
            environment: [
                "MEDIA_STORAGE": "s3", "S3_ENDPOINT": "http://127.0.0.1:\(bucket.port)", "S3_BUCKET": "hung",
                "S3_ACCESS_KEY_ID": "AKID", "S3_SECRET_ACCESS_KEY": "secret", "MEDIA_PUBLIC_BASE_URL": "https://cdn.example.test/public/",
            ],
            defaultDirectory: "unused", defaultPublicBaseURL: ""
        )
        // As many hung PUTs as the shared pool has threads: enough to hold all of it if media I/O ran there.
        // Each from an account of its own, all from one address: at most 7, so the upload below still gets a slot
        // (2 uploads in flight per account, 8 per client address).
        let hung = min(max(2, NIOSingletons.blockingPoolThreadCountSuggestion), 7)
        try await withTestServer(configure: {
            $0.mediaStorage = storage
            $0.rateLimitsEnabled = false
            $0.imageQueue = hung + 8
        }) { server in
            var accounts: [TestAccount] = []
            for _ in 0...hung { accounts.append(try await server.anonymousAccount()) }
            let image = try await MediaFixtures.image("tiny-hung.png", width: 8, height: 8)
            let uploads = accounts.dropLast().map { account in Task { try await server.upload(image, token: account.token) } }
            let account = accounts[hung]
            // Each PUT is on a thread once its connection is accepted; the media pool takes at most its own size.
            let held = await bucket.waitForConnections(min(hung, MediaIO.threadCount))
            if !held { await bucket.close() }
            try #require(held, "the uploads' PUTs should reach the hung bucket")

            // Not an image: refused after its body went to a temp file through FileSystem.shared. With the media
            // I/O on the shared pool, that file work waited until a hung PUT gave up (its 30 s timeout).
            let refused = try await server.upload(Array("not an image at all".utf8), token: account.token)
            #expect(refused.status == 415, "\(refused.text)")
            #expect(bucket.droppedConnections == 0, "the temp file was written only after a hung PUT gave up")

            await bucket.close()
            for upload in uploads {
                let response = try await upload.value
                #expect(response.status >= 500, "a PUT that failed is the server's failure: \(response.status)")
            }
        }
    }
}
