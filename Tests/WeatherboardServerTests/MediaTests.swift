import Board
import CurlClient
import Database
import Foundation
import MediaStorage
import Subprocess
import Testing
import WeatherboardServer

/// Images made for the media tests by the `vips` CLI (libvips-tools, installed by `deploy/dev`) from pixels
/// written here as PPM.
enum MediaFixtures {
    static let directory: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("weatherboard-media-tests-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// Runs a command (looked up on PATH); async (swift-subprocess), so no cooperative thread waits for it.
    static func run(_ arguments: [String]) async throws {
        let result = try await Subprocess.run(
            .name(arguments[0]), arguments: Arguments(Array(arguments.dropFirst())), output: .discarded, error: .string(limit: 1 << 16)
        )
        guard case .exited(0) = result.terminationStatus else {
            throw TestFailure("\(arguments.joined(separator: " ")): \(result.terminationStatus): \(result.standardError)")
        }
    }

    /// A `width × height` image in the format of `name`'s extension (`.jpg`, `.png`, `.webp`). Each call has files
    /// of its own, so tests running at once never read each other's half-written output.
    static func image(_ name: String, width: Int = 64, height: Int = 48) async throws -> [UInt8] {
        var ppm = Array("P6\n\(width) \(height)\n255\n".utf8)
        for y in 0..<height {
            for x in 0..<width {
                ppm.append(x < width / 2 ? 220 : 20)
                ppm.append(y < height / 2 ? 40 : 200)
                ppm.append(UInt8((x * 255) / max(1, width - 1)))
            }
        }
        let unique = directory + "/" + UUID().uuidString
        let source = unique + ".ppm"
        try Data(ppm).write(to: URL(fileURLWithPath: source))
        let output = unique + "-" + name
        try await run(["vips", "copy", source, output])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    /// Made once per test process.
    static var jpeg: [UInt8] { get async throws { try await madeJPEG.value } }
    static var png: [UInt8] { get async throws { try await madePNG.value } }
    private static let madeJPEG = Task { try await image("photo.jpg") }
    private static let madePNG = Task { try await image("drawing.png", width: 40, height: 90) }
}

extension TestServer {
    /// `POST /v1/media` as a phone sends it: `multipart/form-data` with `file` and, optionally, `alt`.
    func upload(_ bytes: [UInt8], filename: String = "IMG_0001.HEIC", alt: String? = nil, token: String) async throws -> CurlResponse {
        let boundary = "wbboundary\(UInt32.random(in: 0...UInt32.max))"
        var body: [UInt8] = []
        if let alt {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"alt\"\r\n\r\n\(alt)\r\n".utf8)
        }
        body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(filename)\"\r\nContent-Type: image/heic\r\n\r\n".utf8)
        body += bytes
        body += Array("\r\n--\(boundary)--\r\n".utf8)
        return try await request(
            "POST", "/v1/media", headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "multipart/form-data; boundary=\(boundary)")], body: body
        )
    }

    /// A GET of an absolute URL the server handed out.
    func fetch(_ url: String, token: String? = nil) async throws -> CurlResponse {
        var headers: [(String, String)] = []
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return try await sharedClient.send(CurlRequest(method: "GET", url: url, headers: headers, body: nil, timeoutMilliseconds: 15_000))
    }
}

extension TestServer {
    /// The moderation queue's item for `postID`, walking every page (the queue is shared by the whole suite).
    func queueItem(postID: String, moderator: TestAccount) async throws -> [String: Any]? {
        var cursor: String? = nil
        repeat {
            let page = try await json("GET", "/v1/moderation/queue?limit=100" + (cursor.map { "&cursor=\($0)" } ?? ""), token: moderator.token)
            if let item = page.items.first(where: { ($0["post"] as? [String: Any])?["id"] as? String == postID }) { return item }
            cursor = page.object["nextCursor"] as? String
        } while cursor != nil
        return nil
    }
}

/// Runs `body` against a server whose media live in a fresh directory (`MEDIA_STORAGE=local`).
func withMediaServer<T: Sendable>(
    configure: @escaping (inout AppConfiguration) -> Void = { _ in },
    _ body: @Sendable (TestServer) async throws -> T
) async throws -> T {
    let directory = MediaFixtures.directory + "/store-\(UUID().uuidString)"
    return try await withTestServer(configure: { configuration in
        configuration.mediaStorage = .local(directory: directory)
        configure(&configuration)
    }, body)
}

/// JPEG marker segments (APPn, COM) in a file: what a metadata check reads.
func jpegMarkers(_ bytes: [UInt8]) -> [UInt8] {
    var markers: [UInt8] = []
    var i = 2
    while i + 4 <= bytes.count, bytes[i] == 0xFF {
        let marker = bytes[i + 1]
        markers.append(marker)
        if marker == 0xDA { break }  // start of scan: entropy-coded data follows
        let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
        i += 2 + length
    }
    return markers
}

@Suite("Media (CONTRACT §8)")
struct MediaTests {
    @Test("an upload is re-encoded as a JPEG with absolute URLs, a preview and a BlurHash; its files are served immutable")
    func uploadAndServe() async throws {
        try await withMediaServer { server in
            let account = try await server.anonymousAccount()
            let response = try await server.upload(try await MediaFixtures.png, alt: "비 오는 창가", token: account.token)
            #expect(response.status == 201, "\(response.text)")
            let media = response.object
            #expect(media["contentType"] as? String == "image/jpeg")
            #expect(media["width"] as? Int == 40)
            #expect(media["height"] as? Int == 90)
            #expect(media["alt"] as? String == "비 오는 창가")
            let blurhash = media["blurhash"] as? String ?? ""
            #expect(blurhash.count == 28)  // size flag, max AC, DC (4) and 11 AC components (2 each): 4×3
            let url = try #require(media["url"] as? String)
            let preview = try #require(media["previewUrl"] as? String)
            #expect(url.hasPrefix("http://127.0.0.1:\(server.port)/media/"))
            let file = try await server.fetch(url)
            #expect(file.status == 200)
            #expect(file.header("content-type") == "image/jpeg")
            #expect(file.header("cache-control") == "public, max-age=31536000, immutable")
            #expect(file.header("etag") != nil)
            #expect(Array(file.body.prefix(3)) == [0xFF, 0xD8, 0xFF])
            #expect(file.body.count == media["byteSize"] as? Int)
            // No metadata segment at all: only the JPEG's own tables before the scan.
            let markers = jpegMarkers(file.body)
            let metadata = markers.filter { marker in (0xE1...0xEF).contains(marker) || marker == 0xFE }
            #expect(metadata.isEmpty)
            #expect(try await server.fetch(preview).status == 200)
            // The key in the URL is unguessable: 32 base32 characters.
            let key = url.split(separator: "/").last.map { $0.dropLast(4) } ?? ""
            #expect(key.count == 32)
        }
    }

    @Test("refusals: not an image 415, not multipart 415, too large 413, broken 422, no file 422, long or NUL alt 422, banned 403")
    func refusals() async throws {
        try await withMediaServer(configure: { $0.mediaMaxBytes = 64 * 1024 }) { server in
            let account = try await server.anonymousAccount()
            let text = try await server.upload(Array("just some text, named .jpg".utf8), filename: "cat.jpg", token: account.token)
            #expect(text.status == 415)
            #expect(text.errorCode == "unsupported_media_type")
            let json = try await server.json("POST", "/v1/media", token: account.token, ["file": "abc"])
            #expect(json.status == 415)
            let big = try await server.upload([0xFF, 0xD8, 0xFF] + [UInt8](repeating: 7, count: 100 * 1024), token: account.token)
            #expect(big.status == 413)
            #expect(big.errorCode == "payload_too_large")
            let jpeg = try await MediaFixtures.jpeg
            let truncated = try await server.upload(Array(jpeg.prefix(jpeg.count / 3)), token: account.token)
            #expect(truncated.status == 422)
            #expect(truncated.errorCode == "invalid_field")
            #expect(truncated.errorMessage?.hasPrefix("file") == true)
            let boundary = "b0und4ry"
            let empty = try await server.request(
                "POST", "/v1/media", headers: [("Authorization", "Bearer \(account.token)"), ("Content-Type", "multipart/form-data; boundary=\(boundary)")],
                body: Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"alt\"\r\n\r\nx\r\n--\(boundary)--\r\n".utf8)
            )
            #expect(empty.status == 422)
            #expect(empty.errorMessage?.hasPrefix("file") == true)
            #expect(try await server.upload(jpeg, alt: String(repeating: "가", count: 1501), token: account.token).status == 422)
            #expect(try await server.upload(jpeg, alt: "a\u{0}b", token: account.token).status == 422)
            #expect(try await server.upload(jpeg, alt: String(repeating: "가", count: 1500), token: account.token).status == 201)

            let (moderator, _, _) = try await server.registeredAccount(prefix: "mod")
            try await server.grantRole("moderator", to: moderator)
            #expect(try await server.json("POST", "/v1/moderation/accounts/\(account.id)/ban", token: moderator.token, ["until": NSNull(), "reason": "x"]).status == 200)
            let banned = try await server.upload(jpeg, token: account.token)
            #expect(banned.status == 403)
            #expect(banned.errorCode == "account_banned")
        }
    }

    @Test("only the owner reads, edits and deletes a media object; deleting it removes its files")
    func ownerOnly() async throws {
        try await withMediaServer { server in
            let owner = try await server.anonymousAccount()
            let other = try await server.anonymousAccount()
            let media = try await server.upload(try await MediaFixtures.jpeg, token: owner.token).object
            let id = try #require(media["id"] as? String)
            #expect(try await server.json("GET", "/v1/media/\(id)", token: owner.token).status == 200)
            #expect(try await server.json("GET", "/v1/media/\(id)", token: other.token).errorCode == "not_owner")
            #expect(try await server.json("PATCH", "/v1/media/\(id)", token: other.token, ["alt": "mine now"]).status == 403)
            #expect(try await server.json("DELETE", "/v1/media/\(id)", token: other.token).status == 403)
            for bad in ["0\(id)", "+\(id)", "99999999999999999999", "abc"] {
                #expect(try await server.json("GET", "/v1/media/\(bad)", token: owner.token).status == 404)
            }
            let patched = try await server.json("PATCH", "/v1/media/\(id)", token: owner.token, ["alt": "  새 설명  "])
            #expect(patched.object["alt"] as? String == "새 설명")
            #expect(try await server.json("PATCH", "/v1/media/\(id)", token: owner.token, ["alt": NSNull()]).object["alt"] is NSNull)
            let empty = try await server.json("PATCH", "/v1/media/\(id)", token: owner.token, [String: Any]())
            #expect(empty.status == 422)
            #expect(empty.errorMessage?.hasPrefix("alt") == true)
            let url = try #require(media["url"] as? String)
            #expect(try await server.json("DELETE", "/v1/media/\(id)", token: owner.token).status == 204)
            #expect(try await server.fetch(url).status == 404)
            #expect(try await server.json("GET", "/v1/media/\(id)", token: owner.token).status == 404)
        }
    }

    @Test("posts take up to 4 of the caller's media in order; lists carry them; a replaced media is deleted")
    func postsWithMedia() async throws {
        try await withMediaServer { server in
            let (author, _, _) = try await server.registeredAccount(prefix: "photo")
            let other = try await server.anonymousAccount()
            var ids: [String] = []
            for _ in 0..<5 {
                ids.append(try #require(try await server.upload(try await MediaFixtures.jpeg, token: author.token).object["id"] as? String))
            }
            let foreign = try #require(try await server.upload(try await MediaFixtures.png, token: other.token).object["id"] as? String)
            let payload: ([String]) -> [String: Any] = { ["weatherType": "rain", "category": "food", "body": "사진과 함께", "regionId": "1835848", "mediaIds": $0] }
            #expect(try await server.json("POST", "/v1/posts", token: author.token, payload(ids)).errorMessage?.hasPrefix("mediaIds") == true)
            #expect(try await server.json("POST", "/v1/posts", token: author.token, payload([ids[0], foreign])).errorMessage?.hasPrefix("mediaIds") == true)
            #expect(try await server.json("POST", "/v1/posts", token: author.token, payload([ids[0], ids[0]])).status == 422)
            #expect(try await server.json("POST", "/v1/posts", token: author.token, payload(["x"])).status == 422)

            let created = try await server.json("POST", "/v1/posts", token: author.token, payload([ids[2], ids[0]]))
            #expect(created.status == 201)
            let postID = try #require(created.object["id"] as? String)
            #expect((created.object["media"] as? [[String: Any]])?.map { $0["id"] as? String } == [ids[2], ids[0]])
            // A media object is on one post at most.
            #expect(try await server.json("POST", "/v1/posts", token: author.token, payload([ids[0]])).status == 422)

            let list = try await server.json("GET", "/v1/posts?authorId=\(author.id)")
            #expect((list.items.first?["media"] as? [[String: Any]])?.count == 2)
            let plain = try await server.createPost(author, body: "사진 없는 글")
            #expect((plain["media"] as? [Any])?.isEmpty == true)

            // Replace the list: ids[2] stays, ids[0] is left off (deleted), ids[1] added.
            let dropped = try #require((created.object["media"] as? [[String: Any]])?.last?["url"] as? String)
            let edited = try await server.json("PATCH", "/v1/posts/\(postID)", token: author.token, ["mediaIds": [ids[1], ids[2]]])
            #expect(edited.status == 200)
            #expect((edited.object["media"] as? [[String: Any]])?.map { $0["id"] as? String } == [ids[1], ids[2]])
            #expect(try await server.json("GET", "/v1/media/\(ids[0])", token: author.token).status == 404)
            // Its files are the background sync's to move (MEDIA_SYNC_SECONDS); this test runs it.
            #expect(await server.dependencies.media.syncVisibility(.owner(try #require(Int(author.id)))) == 1)
            #expect(try await server.fetch(dropped).status == 404)
        }
    }

    @Test("a page of posts with images takes as many statements as one without: one")
    func mediaCostsNoStatements() async throws {
        try await withMediaServer { server in
            let (author, _, _) = try await server.registeredAccount(prefix: "pages")
            let plainAuthor = try await server.anonymousAccount()
            for _ in 0..<3 {
                var ids: [String] = []
                for _ in 0..<2 { ids.append(try #require(try await server.upload(try await MediaFixtures.jpeg, token: author.token).object["id"] as? String)) }
                let payload: [String: Any] = ["weatherType": "rain", "category": "food", "body": "사진 두 장", "regionId": "1835848", "mediaIds": ids]
                #expect(try await server.json("POST", "/v1/posts", token: author.token, payload).status == 201)
                _ = try await server.createPost(plainAuthor, body: "사진 없는 글")
            }
            let pool = server.dependencies.database
            // Statements this server's pool ran for one anonymous GET. The fewest of three tries: a background
            // service (purger, media sync) may run one of its own on the same pool meanwhile.
            func statements(_ path: String, check: ([[String: Any]]) -> Bool) async throws -> Int {
                var fewest = Int.max
                for _ in 0..<3 {
                    let before = pool.statementCount
                    let page = try await server.json("GET", path)
                    #expect(page.status == 200)
                    #expect(check(page.items.isEmpty ? [page.object] : page.items), "\(path)")
                    fewest = min(fewest, pool.statementCount - before)
                }
                return fewest
            }
            let withImages = try await statements("/v1/posts?authorId=\(author.id)") { items in
                items.count == 3 && items.allSatisfy { ($0["media"] as? [Any])?.count == 2 }
            }
            let without = try await statements("/v1/posts?authorId=\(plainAuthor.id)") { items in
                items.count == 3 && items.allSatisfy { ($0["media"] as? [Any])?.isEmpty == true }
            }
            #expect(withImages == 1)
            #expect(without == 1)
        }
    }

    @Test("hidden, removed and deleted posts stop serving their media publicly; restore brings it back; moderators always see it")
    func visibility() async throws {
        try await withMediaServer { server in
            let author = try await server.anonymousAccount()
            let (moderator, _, _) = try await server.registeredAccount(prefix: "mod")
            try await server.grantRole("moderator", to: moderator)
            let mediaID = try #require(try await server.upload(try await MediaFixtures.jpeg, alt: "증거", token: author.token).object["id"] as? String)
            let post = try await server.json(
                "POST", "/v1/posts", token: author.token, ["weatherType": "snow", "category": "place", "body": "눈 오는 공원", "regionId": "1835848", "mediaIds": [mediaID]]
            ).object
            let postID = try #require(post["id"] as? String)
            let url = try #require((post["media"] as? [[String: Any]])?.first?["url"] as? String)
            #expect(try await server.fetch(url).status == 200)

            let reporter = try await server.anonymousAccount()
            #expect(try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporter.token, ["reason": "spam"]).status == 201)
            let item = try #require(try await server.queueItem(postID: postID, moderator: moderator))
            let queued = try #require(((item["post"] as? [String: Any])?["media"] as? [[String: Any]])?.first)
            let moderatorURL = try #require(queued["url"] as? String)
            #expect(moderatorURL.hasSuffix("/v1/moderation/media/\(mediaID)"))

            #expect(try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "remove"]).status == 200)
            #expect(try await server.fetch(url).status == 404)
            let seen = try await server.fetch(moderatorURL, token: moderator.token)
            #expect(seen.status == 200)
            #expect(Array(seen.body.prefix(2)) == [0xFF, 0xD8])
            #expect(try await server.fetch(moderatorURL + "/preview", token: moderator.token).status == 200)
            #expect(try await server.fetch(moderatorURL, token: reporter.token).status == 403)
            #expect(try await server.fetch(moderatorURL).status == 401)

            #expect(try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "restore"]).status == 200)
            #expect(try await server.fetch(url).status == 200)

            #expect(try await server.json("DELETE", "/v1/posts/\(postID)", token: author.token).status == 204)
            #expect(try await server.fetch(url).status == 404)
            #expect(try await server.fetch(moderatorURL, token: moderator.token).status == 200)
        }
    }

    @Test("a report's snapshot keeps the post's media as evidence through the author's account deletion")
    func evidenceSurvivesDeletion() async throws {
        try await withMediaServer { server in
            let author = try await server.anonymousAccount()
            let (moderator, _, _) = try await server.registeredAccount(prefix: "mod")
            try await server.grantRole("moderator", to: moderator)
            let kept = try #require(try await server.upload(try await MediaFixtures.jpeg, token: author.token).object["id"] as? String)
            let loose = try #require(try await server.upload(try await MediaFixtures.png, token: author.token).object["url"] as? String)
            let post = try await server.json(
                "POST", "/v1/posts", token: author.token, ["weatherType": "rain", "category": "food", "body": "광고 사진", "regionId": "1835848", "mediaIds": [kept]]
            ).object
            let postID = try #require(post["id"] as? String)
            let url = try #require((post["media"] as? [[String: Any]])?.first?["url"] as? String)
            let reporter = try await server.anonymousAccount()
            #expect(try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporter.token, ["reason": "spam"]).status == 201)
            let snapshot = try await server.dependencies.database.query("SELECT array_to_string(reported_media, ',') AS ids FROM reports WHERE post_id = \(Int(postID)!)")
            #expect(try snapshot[0].decode(String.self, "ids") == kept)

            #expect(try await server.json("DELETE", "/v1/accounts/me", token: author.token).status == 204)
            #expect(await server.dependencies.media.syncVisibility(.owner(try #require(Int(author.id)))) == 2)
            #expect(try await server.fetch(url).status == 404)
            #expect(try await server.fetch(loose).status == 404)
            let evidence = try await server.fetch(server.baseURL + "/v1/moderation/media/\(kept)", token: moderator.token)
            #expect(evidence.status == 200)
        }
    }

    @Test("alt text is public with its post, so a blocked term in it (however written) holds the post: on create, on a PATCH of mediaIds, on a PATCH of the alt")
    func blockedTermsInAltText() async throws {
        try await withMediaServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let letters = Array("bcdfghjklmnpqrstvwxz")
            let term = "qa" + String((0..<6).map { _ in letters.randomElement()! })
            let fullwidth = String(String.UnicodeScalarView(term.unicodeScalars.map { Unicode.Scalar($0.value + 0xFEE0)! }))
            _ = try await server.dependencies.moderation.addTerm(term)
            let author = try await server.anonymousAccount()
            let image = try await MediaFixtures.image("tiny-alt.png", width: 8, height: 8)
            func upload(alt: String?) async throws -> String {
                try #require(try await server.upload(image, alt: alt, token: author.token).object["id"] as? String)
            }
            func post(_ mediaIDs: [String]) async throws -> String {
                let response = try await server.json(
                    "POST", "/v1/posts", token: author.token, ["weatherType": "rain", "category": "food", "body": "깨끗한 글", "regionId": "1835848", "mediaIds": mediaIDs]
                )
                return try #require(response.object["id"] as? String)
            }
            let onCreate = try await post([try await upload(alt: "사진: \(fullwidth)")])
            let byPatch = try await post([])
            let dirty = try await upload(alt: "ＡＬＴ \(term.uppercased())")
            #expect(try await server.json("PATCH", "/v1/posts/\(byPatch)", token: author.token, ["mediaIds": [dirty]]).status == 200)
            let cleanMedia = try await upload(alt: "맑은 하늘")
            let byAlt = try await post([cleanMedia])
            let clean = try await post([try await upload(alt: "비 오는 창가")])
            #expect(try await server.json("GET", "/v1/posts/\(byAlt)").status == 200)
            let hidden = String(term.prefix(1)) + "\u{200B}" + String(term.dropFirst())
            let altEdit = try await server.json("PATCH", "/v1/media/\(cleanMedia)", token: author.token, ["alt": "하늘 \(hidden)"])
            #expect(altEdit.status == 200)
            _ = try await server.dependencies.moderation.removeTerm(term)
            #expect(try await server.json("GET", "/v1/posts/\(onCreate)").status == 404, "alt on create was not held")
            #expect(try await server.json("GET", "/v1/posts/\(byPatch)").status == 404, "alt through PATCH mediaIds was not held")
            #expect(try await server.json("GET", "/v1/posts/\(byAlt)").status == 404, "a PATCH of the alt was not held")
            #expect(try await server.json("GET", "/v1/posts/\(clean)").status == 200)
            // Held for review like any filtered post (its author still sees it as visible): queued for the moderators.
            let asAuthor = try await server.json("GET", "/v1/posts/\(byAlt)", token: author.token)
            #expect(asAuthor.object["status"] as? String == "visible")
            let queued = try await server.dependencies.database.count(
                "SELECT count(*) AS n FROM reports WHERE reason = 'filter' AND status = 'open' AND post_id = ANY(\([onCreate, byPatch, byAlt])::int8[])"
            )
            #expect(queued == 3)
        }
    }

    @Test("an upload that finishes while its account's deletion commits makes no media (401), and leaves no files")
    func uploadRacingDeletionIsRefused() async throws {
        try await withMediaServer { server in
            let account = try await server.anonymousAccount()
            let accountID = try #require(Int(account.id))
            let database = server.dependencies.database
            let image = try await MediaFixtures.image("tiny-race.png", width: 8, height: 8)
            let deletion = try await GatedTransaction.accountDeletion(accountID, on: database)
            let upload = Task { try await server.upload(image, token: account.token) }
            #expect(try await waitForLockWaiter("%INSERT INTO media%", behind: deletion))
            try await deletion.open()
            let response = try await upload.value
            #expect(response.status == 401)
            #expect(try await database.count("SELECT count(*) AS n FROM media WHERE owner_id = \(accountID)") == 0)
            let directory = server.configuration.mediaStorage.directory
            let files = (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".jpg") }
            #expect(files.isEmpty, "\(files)")
        }
    }

    @Test("uploads are limited per account: 14 uploads from an anonymous account, 2 at once (its uploads in flight), exactly 10 made")
    func uploadLimit() async throws {
        try await withMediaServer(configure: { $0.imageQueue = 16 }) { server in
            let account = try await server.anonymousAccount()
            let image = try await MediaFixtures.image("tiny.png", width: 8, height: 8)
            var statuses: [Int] = []
            for _ in 0..<7 {
                statuses += try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<2 { group.addTask { try await server.upload(image, token: account.token).status } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            #expect(statuses.filter { $0 == 201 }.count == 10)
            #expect(statuses.filter { $0 == 429 }.count == 4)
        }
    }
}

/// What deletes media rows and files, the purger, over the shared database: one test at a time, so no pass deletes
/// the rows another test's server still has to delete the files of (each server has a directory of its own).
@Suite("Media purge", .serialized)
struct MediaPurgeTests {
    /// The server's purger with a lock of its own and nothing but media old enough to go, so it never races the
    /// purger tests' own passes over their planted rows. (This suite's passes are the only ones over media in
    /// the test run, one at a time: the other purger test's pass leaves media alone.)
    static func mediaPurger(_ server: TestServer) -> Purger {
        var policy = Purger.Policy(evidenceDays: 100_000)
        policy.idempotencyHours = 1_000_000
        policy.revokedSessionHours = 1_000_000
        policy.lockKey = Int64.random(in: 1...Int64.max)
        return Purger(database: server.dependencies.database, policy: policy, media: server.dependencies.media)
    }

    @Test("the purger deletes media never attached after 24 hours and nothing younger, and keeps media attached while it waited on its row")
    func purgeUnattached() async throws {
        try await withMediaServer { server in
            let account = try await server.anonymousAccount()
            let old = try await server.upload(try await MediaFixtures.jpeg, token: account.token).object
            let young = try await server.upload(try await MediaFixtures.png, token: account.token).object
            let raced = try await server.upload(try await MediaFixtures.png, token: account.token).object
            let oldID = try #require((old["id"] as? String).flatMap { Int($0) })
            let mediaID = try #require((raced["id"] as? String).flatMap { Int($0) })
            let post = try await server.createPost(account)
            let postID = try #require((post["id"] as? String).flatMap { Int($0) })
            let database = server.dependencies.database
            try await database.execute("UPDATE media SET created_at = now() - interval '25 hours' WHERE id = ANY(\([String(oldID), String(mediaID)])::int8[])")
            // An attach of the raced media that holds its row until the purge waits on it.
            let attach = try await GatedTransaction.start(["UPDATE media SET post_id = \(postID), position = 0 WHERE id = \(mediaID)"], on: database)
            let purge = Task { try await Self.mediaPurger(server).runOnce() }
            #expect(try await waitForLockWaiter("DELETE FROM media m WHERE m.id IN (%", behind: attach))
            try await attach.open()
            let pass = try await purge.value
            #expect(pass.ran)
            #expect(pass.counts["media_unattached"] == 1)
            #expect(try await server.fetch(try #require(old["url"] as? String)).status == 404)
            #expect(try await server.json("GET", "/v1/media/\(oldID)", token: account.token).status == 404)
            #expect(try await server.fetch(try #require(young["url"] as? String)).status == 200)
            // The raced media was attached while the purge waited for it: re-checked, it stays, files and all.
            let kept = try await database.query("SELECT post_id FROM media WHERE id = \(mediaID)")
            #expect(try kept.first?.decode(Int?.self, "post_id") == postID)
            #expect(try await server.fetch(try #require(raced["url"] as? String)).status == 200)
        }
    }

    /// Every `.jpg` under the server's media directory, relative to it.
    static func files(_ server: TestServer) -> [String] {
        let directory = server.configuration.mediaStorage.directory
        return (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".jpg") }.sorted()
    }

    @Test("account deletion only marks its media: no file is touched in the request; the sync makes every URL 404, the purger deletes rows and files; evidence stays")
    func accountDeletionMarksMediaOnly() async throws {
        try await withMediaServer { server in
            let author = try await server.anonymousAccount()
            let authorID = try #require(Int(author.id))
            let (moderator, _, _) = try await server.registeredAccount(prefix: "mod")
            try await server.grantRole("moderator", to: moderator)
            let image = try await MediaFixtures.image("tiny-deletion.png", width: 8, height: 8)
            var media: [[String: Any]] = []
            for _ in 0..<4 { media.append(try await server.upload(image, token: author.token).object) }
            let ids = media.compactMap { $0["id"] as? String }
            let urls = media.compactMap { $0["url"] as? String } + media.compactMap { $0["previewUrl"] as? String }
            #expect(ids.count == 4 && urls.count == 8)
            func post(_ mediaIDs: [String]) async throws -> String {
                let response = try await server.json(
                    "POST", "/v1/posts", token: author.token, ["weatherType": "rain", "category": "food", "body": "사진 글", "regionId": "1835848", "mediaIds": mediaIDs]
                )
                return try #require(response.object["id"] as? String)
            }
            _ = try await post([ids[0], ids[1]])
            let reported = try await post([ids[2]])
            let reporter = try await server.anonymousAccount()
            #expect(try await server.json("POST", "/v1/posts/\(reported)/reports", token: reporter.token, ["reason": "spam"]).status == 201)
            // ids[3] stays loose (never attached).
            let filesBefore = Self.files(server)
            #expect(filesBefore.count == 8 && filesBefore.allSatisfy { $0.hasPrefix("public/") }, "\(filesBefore)")

            #expect(try await server.json("DELETE", "/v1/accounts/me", token: author.token).status == 204)
            // The request marked rows, in its transaction, and touched no file.
            #expect(Self.files(server) == filesBefore)
            let database = server.dependencies.database
            #expect(try await database.count("SELECT count(*) AS n FROM media WHERE owner_id = \(authorID) AND retired AND sync_due") == 4)
            #expect(try await database.count("SELECT count(*) AS n FROM media WHERE owner_id = \(authorID) AND post_id IS NOT NULL") == 1)

            // The sync (every MEDIA_SYNC_SECONDS; run here) moves every file to the private side: every URL 404.
            #expect(await server.dependencies.media.syncVisibility(.owner(authorID)) == 4)
            for url in urls { #expect(try await server.fetch(url).status == 404, "\(url)") }
            #expect(Self.files(server).allSatisfy { $0.hasPrefix("private/") })
            #expect(await server.dependencies.media.syncVisibility(.owner(authorID)) == 0)

            // The purger deletes what no report names, rows and files; the reported post's image stays as evidence.
            let pass = try await Self.mediaPurger(server).runOnce()
            #expect(pass.ran)
            #expect((pass.counts["media_retired"] ?? 0) >= 3)
            #expect(try await database.count("SELECT count(*) AS n FROM media WHERE owner_id = \(authorID)") == 1)
            let evidenceID = try #require(Int(ids[2]))
            let key = try #require(try await database.query("SELECT storage_key FROM media WHERE id = \(evidenceID)").first?.decode(String.self, "storage_key"))
            #expect(Self.files(server) == ["private/\(key)-preview.jpg", "private/\(key).jpg"])
            #expect(try await server.fetch(server.baseURL + "/v1/moderation/media/\(ids[2])", token: moderator.token).status == 200)
        }
    }

    @Test("a PATCH of mediaIds only marks the media left off: its files stay until the sync makes them 404, then the purger deletes them")
    func replacedMediaIsMarkedOnly() async throws {
        try await withMediaServer { server in
            let author = try await server.anonymousAccount()
            let authorID = try #require(Int(author.id))
            let image = try await MediaFixtures.image("tiny-replaced.png", width: 8, height: 8)
            let first = try await server.upload(image, token: author.token).object
            let second = try await server.upload(image, token: author.token).object
            let firstID = try #require(first["id"] as? String)
            let secondID = try #require(second["id"] as? String)
            let created = try await server.json(
                "POST", "/v1/posts", token: author.token, ["weatherType": "rain", "category": "food", "body": "바꿀 사진", "regionId": "1835848", "mediaIds": [firstID]]
            )
            let postID = try #require(created.object["id"] as? String)
            let filesBefore = Self.files(server)
            #expect(try await server.json("PATCH", "/v1/posts/\(postID)", token: author.token, ["mediaIds": [secondID]]).status == 200)
            #expect(Self.files(server) == filesBefore, "the PATCH touched files")
            #expect(try await server.json("GET", "/v1/media/\(firstID)", token: author.token).status == 404)

            #expect(await server.dependencies.media.syncVisibility(.owner(authorID)) == 1)
            #expect(try await server.fetch(try #require(first["url"] as? String)).status == 404)
            #expect(try await server.fetch(try #require(second["url"] as? String)).status == 200)
            _ = try await Self.mediaPurger(server).runOnce()
            #expect(try await server.dependencies.database.count("SELECT count(*) AS n FROM media WHERE id = \(try #require(Int(firstID)))") == 0)
            #expect(Self.files(server).count == 2)
            #expect(Self.files(server).allSatisfy { $0.hasPrefix("public/") })
        }
    }

    @Test("a row one sync has claimed is not moved by another (another instance) until the claim ends")
    func claimedRowsAreSkipped() async throws {
        try await withMediaServer { server in
            let author = try await server.anonymousAccount()
            let authorID = try #require(Int(author.id))
            let image = try await MediaFixtures.image("tiny-claimed.png", width: 8, height: 8)
            let url = try #require(try await server.upload(image, token: author.token).object["url"] as? String)
            #expect(try await server.json("DELETE", "/v1/accounts/me", token: author.token).status == 204)
            let database = server.dependencies.database
            // Another instance's sync holds the row's claim.
            try await database.execute("UPDATE media SET sync_claimed_until = now() + interval '1 hour' WHERE owner_id = \(authorID)")
            #expect(await server.dependencies.media.syncVisibility(.owner(authorID)) == 0)
            #expect(try await server.fetch(url).status == 200)
            // Its claim runs out (that instance died): this one takes the row.
            try await database.execute("UPDATE media SET sync_claimed_until = now() - interval '1 second' WHERE owner_id = \(authorID)")
            #expect(await server.dependencies.media.syncVisibility(.owner(authorID)) == 1)
            #expect(try await server.fetch(url).status == 404)
            #expect(try await database.count("SELECT count(*) AS n FROM media WHERE owner_id = \(authorID) AND (sync_due OR sync_claimed_until IS NOT NULL)") == 0)
        }
    }
}

/// The same upload and visibility rules with `MEDIA_STORAGE=s3`, against the S3 stand-in `deploy/dev test` starts
/// (moto, signature checks on): the files are objects in the bucket, moved between `public/` and `private/`.
@Suite("Media on S3")
struct MediaOnS3Tests {
    static func environment() -> [String: String]? {
        let env = ProcessInfo.processInfo.environment
        var mapped: [String: String] = ["MEDIA_STORAGE": "s3"]
        for name in ["ENDPOINT", "BUCKET", "REGION", "ACCESS_KEY_ID", "SECRET_ACCESS_KEY"] {
            guard let value = env["WEATHERBOARD_TEST_S3_\(name)"], !value.isEmpty else {
                if name == "REGION" { continue }
                return nil
            }
            mapped["S3_\(name)"] = value
        }
        mapped["MEDIA_PUBLIC_BASE_URL"] = (mapped["S3_ENDPOINT"] ?? "") + "/" + (mapped["S3_BUCKET"] ?? "") + "/public/"
        return mapped
    }

    @Test("an upload lands in the bucket as two JPEG objects; a removal moves them to private/, a restore back")
    func uploadAndHide() async throws {
        guard let environment = Self.environment() else {
            Issue.record("WEATHERBOARD_TEST_S3_* are not set: run the tests with `deploy/dev test`")
            return
        }
        let storage = try MediaStorageConfiguration(environment: environment, defaultDirectory: "unused", defaultPublicBaseURL: "")
        let store = storage.makeStore(io: MediaIO())
        try await withTestServer(configure: { $0.mediaStorage = storage }) { server in
            let author = try await server.anonymousAccount()
            let uploaded = try await server.upload(try await MediaFixtures.jpeg, token: author.token)
            #expect(uploaded.status == 201, "\(uploaded.text)")
            let url = try #require(uploaded.object["url"] as? String)
            #expect(url.hasPrefix(environment["MEDIA_PUBLIC_BASE_URL"] ?? "?"))
            let name = try #require(url.split(separator: "/").last.map(String.init))
            let object = try #require(try await store.get("public/" + name))
            #expect(Array(object.prefix(3)) == [0xFF, 0xD8, 0xFF])
            #expect(object.count == uploaded.object["byteSize"] as? Int)

            let mediaID = try #require(uploaded.object["id"] as? String)
            let post = try await server.json(
                "POST", "/v1/posts", token: author.token, ["weatherType": "mist", "category": "music", "body": "안개 낀 날의 노래", "regionId": "1835848", "mediaIds": [mediaID]]
            )
            let postID = try #require(post.object["id"] as? String)
            let (moderator, _, _) = try await server.registeredAccount(prefix: "mod")
            try await server.grantRole("moderator", to: moderator)
            let reporter = try await server.anonymousAccount()
            #expect(try await server.json("POST", "/v1/posts/\(postID)/reports", token: reporter.token, ["reason": "spam"]).status == 201)
            #expect(try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "remove"]).status == 200)
            #expect(try await store.get("public/" + name) == nil)
            #expect(try await store.get("private/" + name) != nil)
            #expect(try await server.fetch(server.baseURL + "/v1/moderation/media/\(mediaID)", token: moderator.token).status == 200)
            #expect(try await server.json("POST", "/v1/moderation/posts/\(postID)/decision", token: moderator.token, ["action": "restore"]).status == 200)
            #expect(try await store.get("public/" + name) != nil)
            #expect(try await store.get("private/" + name) == nil)
        }
    }
}
