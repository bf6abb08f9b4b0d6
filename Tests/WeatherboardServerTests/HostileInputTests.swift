import CurlClient
import Database
import Foundation
import Testing

/// Issue #13 findings 7–10: concurrent edits, NUL in text, non-canonical ids/limits/cursors, and term
/// filter evasion. Each test states what the contract requires; none depends on timing.
@Suite("Hostile input")
struct HostileInputTests {
    // MARK: 7. Concurrent edits, ETag and If-Match

    /// The post's revisions, oldest first, as `weatherType|category|title|body`.
    static func revisions(_ server: TestServer, _ id: String) async throws -> [String] {
        try await server.dependencies.database.query(
            "SELECT weather_type, category, coalesce(title, '∅') AS title, body FROM post_revisions WHERE post_id = \(Int(id)!) ORDER BY id"
        ).map { row in
            try ["weather_type", "category", "title", "body"].map { try row.decode(String.self, $0) }.joined(separator: "|")
        }
    }

    static func snapshot(_ object: [String: Any]) -> String {
        [object["weatherType"] as? String ?? "?", object["category"] as? String ?? "?", object["title"] as? String ?? "∅", object["body"] as? String ?? "?"]
            .joined(separator: "|")
    }

    @Test("PATCHes of different fields sent at once all take effect, each storing exactly one distinct revision")
    func concurrentEdits() async throws {
        try await withTestServer(configure: {
            $0.rateLimitsEnabled = false
            $0.dbPoolSize = 8
        }) { server in
            let author = try await server.anonymousAccount()
            // Several posts edited at once, four different fields each: 20 PATCHes in flight together.
            var posts: [(id: String, original: String)] = []
            for n in 0..<5 {
                let post = try await server.createPost(author, weatherType: "rain", category: "food", title: "title \(n)", body: "body \(n)")
                posts.append((try #require(post["id"] as? String), Self.snapshot(post)))
            }
            let patches: [[String: String]] = [["title": "new title"], ["body": "new body"], ["weatherType": "snow"], ["category": "music"]]
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for post in posts {
                    for patch in patches {
                        group.addTask { try await server.json("PATCH", "/v1/posts/\(post.id)", token: author.token, patch).status }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 200 }, "statuses: \(statuses)")
            for post in posts {
                let read = try await server.json("GET", "/v1/posts/\(post.id)", token: author.token)
                #expect(Self.snapshot(read.object) == "snow|music|new title|new body", "post \(post.id) lost an edit")
                let revisions = try await Self.revisions(server, post.id)
                #expect(revisions.count == patches.count, "post \(post.id): \(revisions)")
                #expect(Set(revisions).count == revisions.count, "post \(post.id) recorded a version twice: \(revisions)")
                #expect(revisions.first == post.original)
                #expect(!revisions.contains(Self.snapshot(read.object)))
            }
        }
    }

    @Test("GET and PATCH carry an ETag that changes with each edit; a stale If-Match is 412 and changes nothing")
    func etagAndIfMatch() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let author = try await server.anonymousAccount()
            let id = try #require(try await server.createPost(author, title: "v1 title", body: "v1 body")["id"] as? String)
            let first = try await server.json("GET", "/v1/posts/\(id)")
            let etag1 = try #require(first.header("etag"), "GET has no ETag")
            #expect(etag1.hasPrefix("\"") && etag1.hasSuffix("\""), "a strong ETag: \(etag1)")

            // A matching If-Match applies; the answer carries the new ETag, and GET agrees.
            let edited = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, headers: [("If-Match", etag1)], ["body": "v2 body"])
            #expect(edited.status == 200)
            let etag2 = try #require(edited.header("etag"), "PATCH has no ETag")
            #expect(etag2 != etag1)
            #expect(try await server.json("GET", "/v1/posts/\(id)").header("etag") == etag2)

            // The stale tag: 412 precondition_failed, nothing changed, no revision.
            let stale = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, headers: [("If-Match", etag1)], ["title": "lost"])
            #expect(stale.status == 412)
            #expect(stale.errorCode == "precondition_failed")
            #expect(stale.errorMessage?.isEmpty == false)
            let after = try await server.json("GET", "/v1/posts/\(id)")
            #expect(after.object["title"] as? String == "v1 title")
            #expect(after.object["body"] as? String == "v2 body")
            #expect(after.header("etag") == etag2)
            #expect(try await Self.revisions(server, id).count == 1)

            // A weak tag never matches strongly; a list with the current tag does; `*` matches any post.
            #expect(try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, headers: [("If-Match", "W/\(etag2)")], ["title": "weak"]).status == 412)
            #expect(try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, headers: [("If-Match", "\"nonsense\"")], ["title": "junk"]).status == 412)
            let listed = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, headers: [("If-Match", "\(etag1), \(etag2)")], ["title": "v3 title"])
            #expect(listed.status == 200)
            let etag3 = try #require(listed.header("etag"))
            let star = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, headers: [("If-Match", "*")], ["title": "v4 title"])
            #expect(star.status == 200)
            #expect(star.header("etag") != etag3)

            // An edit that changes nothing keeps the ETag and stores no revision.
            let before = try await Self.revisions(server, id).count
            let same = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, ["title": "v4 title"])
            #expect(same.status == 200)
            #expect(same.header("etag") == star.header("etag"))
            #expect(try await Self.revisions(server, id).count == before)

            // A percent-encoded tag, as OpenAPI-generated clients send header parameters, is read decoded.
            let etag4 = try #require(same.header("etag"))
            let encoded = etag4.replacingOccurrences(of: "\"", with: "%22")
            let percent = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, headers: [("If-Match", encoded)], ["title": "v5 title"])
            #expect(percent.status == 200, "If-Match: \(encoded)")
            #expect(try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, headers: [("If-Match", encoded)], ["title": "v6"]).status == 412)
            let current = try #require(percent.header("etag"))
            let star2 = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, headers: [("If-Match", "%2A")], ["title": "v4 title"])
            #expect(star2.status == 200)
            #expect(star2.header("etag") != current)

            // Another post's tag does not match this one.
            let other = try #require(try await server.createPost(author, body: "other")["id"] as? String)
            let otherTag = try #require(try await server.json("GET", "/v1/posts/\(other)").header("etag"))
            if otherTag != star.header("etag") {
                #expect(try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, headers: [("If-Match", otherTag)], ["title": "x"]).status == 412)
            }
        }
    }

    // MARK: 8. NUL characters

    @Test("a NUL in a login username is 422 invalid_field, never a login as the name before it")
    func nulInLogin() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let (_, username, password) = try await server.registeredAccount(prefix: "nul")
            let response = try await server.json("POST", "/v1/sessions", ["username": "\(username)\u{0}anything", "password": password])
            #expect(response.status == 422, "answered \(response.status): \(response.text)")
            #expect(response.errorCode == "invalid_field")
            #expect(response.errorMessage?.hasPrefix("username") == true, "message: \(response.errorMessage ?? "")")
            // The same with a raw NUL byte inside the JSON string.
            let raw = Array(#"{"username":"\#(username)"#.utf8) + [0] + Array(#"x","password":"\#(password)"}"#.utf8)
            let rawResponse = try await server.request("POST", "/v1/sessions", body: raw)
            #expect(rawResponse.status == 422, "answered \(rawResponse.status): \(rawResponse.text)")
            #expect(rawResponse.errorMessage?.hasPrefix("username") == true)
            // Registration too.
            let anonymous = try await server.anonymousAccount()
            let register = try await server.json(
                "POST", "/v1/accounts/me/credentials", token: anonymous.token, ["username": "nul_\(UInt32.random(in: 0...UInt32.max))\u{0}x", "password": password]
            )
            #expect(register.status == 422)
            #expect(register.errorMessage?.hasPrefix("username") == true)
        }
    }

    @Test("a NUL in a post's body or title is 422 naming the field", arguments: ["body", "title"])
    func nulInPost(_ field: String) async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let account = try await server.anonymousAccount()
            var payload: [String: Any] = ["weatherType": "rain", "category": "food", "body": "fine", "regionId": "1835848"]
            payload[field] = "before\u{0}after"
            let created = try await server.json("POST", "/v1/posts", token: account.token, payload)
            #expect(created.status == 422)
            #expect(created.errorCode == "invalid_field")
            #expect(created.errorMessage?.hasPrefix(field) == true, "message: \(created.errorMessage ?? "")")
            let id = try #require(try await server.createPost(account, body: "clean")["id"] as? String)
            let patched = try await server.json("PATCH", "/v1/posts/\(id)", token: account.token, [field: "x\u{0}"])
            #expect(patched.status == 422)
            #expect(patched.errorMessage?.hasPrefix(field) == true)
            #expect(try await server.json("GET", "/v1/posts/\(id)").object["body"] as? String == "clean")
        }
    }

    @Test(
        "a NUL in a query value or a path segment is 400",
        arguments: ["/v1/posts?weatherType=rain%00", "/v1/regions?q=seoul%00zzz", "/v1/posts?authorId=1%00", "/v1/posts/1%00", "/v1/regions/1835848%00", "/v1/posts?limit=5%00"]
    )
    func nulInURL(_ path: String) async throws {
        try await withTestServer { server in
            let response = try await server.json("GET", path)
            #expect(response.status == 400, "\(path) answered \(response.status): \(response.text)")
            #expect(response.errorCode == "bad_request")
        }
    }

    // MARK: 9. Canonical ids, limits and cursors

    @Test("an id is exactly the string the server gave: variants are 404 in a path, 400 in a query, 422 in a body")
    func canonicalIDs() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let account = try await server.anonymousAccount()
            let id = try #require(try await server.createPost(account, body: "canonical")["id"] as? String)
            #expect(try await server.json("GET", "/v1/posts/\(id)").status == 200)
            for variant in ["+\(id)", "0\(id)", "00\(id)", "\(id)%20", "%20\(id)", "-\(id)", "\(id).0", "99999999999999999999999", "0"] {
                let response = try await server.json("GET", "/v1/posts/\(variant)")
                #expect(response.status == 404, "/v1/posts/\(variant) answered \(response.status)")
                #expect(try await server.json("PATCH", "/v1/posts/\(variant)", token: account.token, ["body": "changed"]).status == 404)
            }
            for variant in ["+1835848", "01835848", "1835848%20"] {
                #expect(try await server.json("GET", "/v1/regions/\(variant)").status == 404, "/v1/regions/\(variant)")
            }
            for query in ["authorId=%2B\(account.id)", "authorId=0\(account.id)", "authorId=\(account.id)%20", "authorId=-\(account.id)",
                          "authorId=99999999999999999999999", "regionId=01835848", "regionId=%2B1835848", "regionId=1835848%20", "regionId="]
            {
                let response = try await server.json("GET", "/v1/posts?\(query)")
                #expect(response.status == 400, "?\(query) answered \(response.status)")
                #expect(response.errorCode == "bad_request")
            }
            #expect(try await server.json("GET", "/v1/posts?authorId=\(account.id)").items.count == 1)
            for regionId in ["01835848", "+1835848", "1835848 "] {
                let response = try await server.json(
                    "POST", "/v1/posts", token: account.token, ["weatherType": "rain", "category": "food", "body": "x", "regionId": regionId]
                )
                #expect(response.status == 422, "regionId \(regionId) answered \(response.status)")
                #expect(response.errorMessage?.hasPrefix("regionId") == true)
            }
        }
    }

    @Test("limit: digits only; any huge value is clamped to 100; 0, negative, signed or not a number is 400")
    func limits() async throws {
        try await withTestServer { server in
            for huge in ["101", "99999999999999999999", "000000000000000000000000000000150"] {
                let posts = try await server.json("GET", "/v1/posts?limit=\(huge)")
                #expect(posts.status == 200, "limit=\(huge) answered \(posts.status)")
                #expect(posts.items.count <= 100)
                #expect(try await server.json("GET", "/v1/regions?q=a&limit=\(huge)").status == 200)
            }
            for bad in ["0", "-1", "abc", "%2B5", "", "5%20", "1e3", "0x10", "00"] {
                let posts = try await server.json("GET", "/v1/posts?limit=\(bad)")
                #expect(posts.status == 400, "limit=\(bad) answered \(posts.status)")
                #expect(posts.errorCode == "bad_request")
                #expect(try await server.json("GET", "/v1/regions?q=a&limit=\(bad)").status == 400, "regions limit=\(bad)")
            }
        }
    }

    @Test("only cursors the server wrote are accepted; forged ones are 400")
    func forgedCursors() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let account = try await server.anonymousAccount()
            for n in 0..<3 { _ = try await server.createPost(account, body: "page \(n)") }
            let first = try await server.json("GET", "/v1/posts?authorId=\(account.id)&limit=1")
            let cursor = try #require(first.object["nextCursor"] as? String)
            #expect(try await server.json("GET", "/v1/posts?authorId=\(account.id)&limit=1&cursor=\(cursor)").status == 200)

            func encoded(_ text: String) -> String {
                Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
            }
            let random = Data((0..<12).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
                .addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "x"
            let forged = [
                random, encoded("c1:-5"), encoded("c1:05"), encoded("c1:+5"), encoded("c1:99999999999999999999"), encoded("c1:0"),
                encoded("c1: 5"), encoded("c1:5 "), encoded("c2:5"), encoded("c1:5") + "%3D%3D", "not%20a%20cursor", "%00",
            ]
            for bad in forged {
                let response = try await server.json("GET", "/v1/posts?cursor=\(bad)")
                #expect(response.status == 400, "cursor \(bad) answered \(response.status)")
                #expect(response.errorCode == "bad_request")
            }
        }
    }

    // MARK: 10. Term filter folding

    /// `text` in fullwidth Latin letters (`ｂａｄ`).
    static func fullwidth(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            ("a"..."z").contains(scalar) ? Unicode.Scalar(scalar.value - 0x61 + 0xFF41)! : scalar
        }))
    }

    /// `text` with `mark` after its first character.
    static func splitting(_ text: String, with mark: String) -> String {
        String(text.prefix(1)) + mark + String(text.dropFirst())
    }

    @Test(
        "blocked terms match after NFKC, case folding and removal of default-ignorable code points",
        arguments: ["fullwidth", "uppercase", "zero-width space", "soft hyphen", "variation selector", "zero-width joiner", "fullwidth uppercase", "term written fullwidth"]
    )
    func termFolding(_ variant: String) async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            // A term no other test's text contains (the term list is shared by every test).
            let letters = Array("bcdfghjklmnpqrstvwxz")
            let term = "qx" + String((0..<6).map { _ in letters.randomElement()! })
            let stored = variant == "term written fullwidth" ? Self.fullwidth(term.uppercased()) : term
            _ = try await server.dependencies.moderation.addTerm(stored)
            let written: String
            switch variant {
            case "fullwidth": written = Self.fullwidth(term)
            case "uppercase": written = term.uppercased()
            case "zero-width space": written = Self.splitting(term, with: "\u{200B}")
            case "soft hyphen": written = Self.splitting(term, with: "\u{00AD}")
            case "variation selector": written = Self.splitting(term, with: "\u{FE0F}")
            case "zero-width joiner": written = Self.splitting(term, with: "\u{200D}")
            case "fullwidth uppercase": written = Self.fullwidth(term).uppercased()
            default: written = term
            }
            let author = try await server.anonymousAccount()
            let held = try #require(try await server.createPost(author, body: "오늘은 \(written) 입니다")["id"] as? String)
            let heldByEdit = try #require(try await server.createPost(author, body: "깨끗한 글")["id"] as? String)
            let edit = try await server.json("PATCH", "/v1/posts/\(heldByEdit)", token: author.token, ["title": "제목 \(written)"])
            #expect(edit.status == 200)
            let clean = try #require(try await server.createPost(author, body: "nothing to see here")["id"] as? String)
            #expect(try await server.dependencies.moderation.removeTerm(stored))
            // Held posts are not public; the clean one is.
            #expect(try await server.json("GET", "/v1/posts/\(held)").status == 404, "\(variant) was not held")
            #expect(try await server.json("GET", "/v1/posts/\(heldByEdit)").status == 404, "\(variant) edit was not held")
            #expect(try await server.json("GET", "/v1/posts/\(clean)").status == 200)
        }
    }
}
