import Board
import CurlClient
import Database
import Foundation
import Testing
import Vocabulary

/// `GET /v1/posts?q=` (CONTRACT §10) over a Korean and mixed corpus, on the real PostgreSQL: particles and
/// compounds, folding, zero-width characters, emoji, one-character terms, several terms, who finds what, edits, alt
/// text, LIKE's characters taken literally, the length rule and NUL; and, as a property, exactly what a plain substring
/// scan of the folded texts finds. Each test posts in a region of its own (the database is shared with every suite).
@Suite("Search")
struct SearchTests {
    /// A region no other test posts in.
    static func region(_ server: TestServer) async throws -> String {
        let rows = try await server.dependencies.database.query(
            "SELECT id FROM regions WHERE id <> 1835848 ORDER BY md5(id::text || \(UUID().uuidString)) LIMIT 1"
        )
        return String(try rows[0].decode(Int.self, "id"))
    }

    /// Every id `q` finds for `token` in `region`, walked page by page (newest first unless `sort` says otherwise).
    static func search(
        _ server: TestServer, _ q: String, region: String, token: String? = nil, sort: String? = nil, limit: Int = 100
    ) async throws -> [String] {
        var ids: [String] = []
        var cursor: String?
        repeat {
            var path = "/v1/posts?regionId=\(region)&limit=\(limit)&q=\(Self.encode(q))"
            if let sort { path += "&sort=\(sort)" }
            if let cursor { path += "&cursor=\(cursor)" }
            let page = try await server.json("GET", path, token: token)
            try #require(page.status == 200, "q=\(q): \(page.status) \(page.text)")
            ids += page.items.compactMap { $0["id"] as? String }
            cursor = page.object["nextCursor"] as? String
        } while cursor != nil && ids.count < 10_000
        return ids
    }

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")) ?? text
    }

    static func post(_ server: TestServer, _ account: TestAccount, region: String, title: String? = nil, _ body: String) async throws -> String {
        try #require(try await server.createPost(account, title: title, body: body, regionId: region)["id"] as? String)
    }

    @Test("Korean inside words, folding, zero-width characters, emoji, one-character terms and several terms")
    func corpus() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let pajeon = try await Self.post(server, author, region: region, title: "비 오는 날", "김치파전에 막걸리랑 한잔")
            let latin = try await Self.post(server, author, region: region, "Pajeon night in Seoul")
            let hidden = try await Self.post(server, author, region: region, "떡\u{200B}볶이 먹으러 가요")
            let emoji = try await Self.post(server, author, region: region, "비 오는 날 ☔️ 창가에서 coffee")
            let other = try await Self.post(server, author, region: region, "맑은 날엔 냉면")
            let cases: [(String, Set<String>)] = [
                ("파전", [pajeon]),            // inside a compound, before a particle
                ("막걸리", [pajeon]),          // before a particle
                ("날", [pajeon, emoji, other]), // one character (the title counts)
                ("파전 막걸리", [pajeon]),     // every term
                ("파전 냉면", []),             // every term, or nothing
                ("ＰＡＪＥＯＮ", [latin]),     // width and case folded
                ("pajeon SEOUL", [latin]),
                ("떡볶이", [hidden]),          // a zero-width space inside the word
                ("떡\u{200D}볶이", [hidden]),  // and inside the query
                ("☔", [emoji]),               // emoji, its variation selector ignored
                ("☔\u{FE0F}", [emoji]),
                ("COFFEE ☔", [emoji]),
                ("파전에막걸리", []),          // a term is one substring: no spanning a space
                ("날 김치", [pajeon]),         // terms in different fields of one post (title and body)
            ]
            for (q, expected) in cases {
                let found = try await Self.search(server, q, region: region)
                #expect(Set(found) == expected, "q=\(q): \(found)")
                #expect(found == found.sorted { Int($0)! > Int($1)! }, "q=\(q): not newest first")
            }
        }
    }

    @Test("%, _ and \\ are themselves; a 100-character query is searched, 101 is 422; empty after folding 422; NUL 400")
    func literalAndLimits() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let percent = try await Self.post(server, author, region: region, "100% 확실한 맛집")
            let underscore = try await Self.post(server, author, region: region, "snake_case 카페")
            let backslash = try await Self.post(server, author, region: region, "C:\\weather 폴더")
            _ = try await Self.post(server, author, region: region, "평범한 글 abc")
            #expect(try await Self.search(server, "%", region: region) == [percent])
            #expect(try await Self.search(server, "_", region: region) == [underscore])
            #expect(try await Self.search(server, "\\", region: region) == [backslash])
            #expect(try await Self.search(server, "%맛", region: region).isEmpty)
            let long = String(repeating: "가", count: 100)
            let exact = try await server.json("GET", "/v1/posts?q=\(Self.encode(long))")
            #expect(exact.status == 200)
            let tooLong = try await server.json("GET", "/v1/posts?q=\(Self.encode(long + "가"))")
            #expect(tooLong.status == 422 && tooLong.errorCode == "invalid_field" && tooLong.errorMessage?.contains("q") == true, "\(tooLong.text)")
            // 100 after folding: ﬁ (one code point) folds to "fi" (two).
            let folded = try await server.json("GET", "/v1/posts?q=\(Self.encode(String(repeating: "\u{FB01}", count: 51)))")
            #expect(folded.status == 422)
            for empty in ["", "%20%20", "%E2%80%8B", "%E3%85%A4%EF%B8%8F"] {
                let response = try await server.json("GET", "/v1/posts?q=\(empty)")
                #expect(response.status == 422 && response.errorCode == "invalid_field", "q=\(empty): \(response.text)")
            }
            let nul = try await server.json("GET", "/v1/posts?q=a%00b")
            #expect(nul.status == 400)
            // A forged cursor far past every id starts at the newest post (not 10^11 empty windows later).
            let forged = try await server.json("GET", "/v1/posts?regionId=\(region)&q=%25&cursor=\(Cursor.encode(Int.max / 2))")
            #expect(forged.status == 200 && forged.items.compactMap { $0["id"] as? String } == [percent], "\(forged.text)")
            for bad in ["abc", "c1:0", "c1:-5", "%00"] {
                #expect(try await server.json("GET", "/v1/posts?q=%25&cursor=\(bad)").status == 400, "cursor \(bad)")
            }
        }
    }

    @Test("hidden, removed and deleted posts are found only by those who may see them; blocked authors by nobody who blocks them")
    func visibility() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let stranger = try await server.anonymousAccount()
            let blocker = try await server.anonymousAccount()
            let moderator = try await server.anonymousAccount()
            try await server.grantRole("moderator", to: moderator)
            let visible = try await Self.post(server, author, region: region, "호떡 가게 visible")
            let hidden = try await Self.post(server, author, region: region, "호떡 가게 hidden")
            let removed = try await Self.post(server, author, region: region, "호떡 가게 removed")
            let deleted = try await Self.post(server, author, region: region, "호떡 가게 deleted")
            let database = server.dependencies.database
            try await database.execute("UPDATE posts SET status = 'hidden', hidden_reason = 'reports' WHERE id = \(Int(hidden)!)")
            try await database.execute("UPDATE posts SET status = 'removed' WHERE id = \(Int(removed)!)")
            #expect(try await server.json("DELETE", "/v1/posts/\(deleted)", token: author.token).status == 204)
            #expect(try await server.json("POST", "/v1/accounts/me/blocks", token: blocker.token, ["accountId": author.id]).status == 204)

            #expect(Set(try await Self.search(server, "호떡", region: region)) == [visible])
            #expect(Set(try await Self.search(server, "호떡", region: region, token: stranger.token)) == [visible])
            #expect(Set(try await Self.search(server, "호떡", region: region, token: author.token)) == [visible, hidden, removed])
            // Deleted posts reach moderators only by id and in the queue (CONTRACT §1), in every order.
            #expect(Set(try await Self.search(server, "호떡", region: region, token: moderator.token)) == [visible, hidden, removed])
            #expect(try await Self.search(server, "호떡", region: region, token: blocker.token).isEmpty)
            // The ranked orders show the list's view of the same posts.
            for sort in ["top", "hot"] {
                #expect(Set(try await Self.search(server, "호떡", region: region, sort: sort)) == [visible])
                #expect(Set(try await Self.search(server, "호떡", region: region, token: author.token, sort: sort)) == [visible, hidden, removed])
                #expect(Set(try await Self.search(server, "호떡", region: region, token: moderator.token, sort: sort)) == [visible, hidden, removed])
                #expect(try await Self.search(server, "호떡", region: region, token: blocker.token, sort: sort).isEmpty)
            }
            // An author filter walks the author's own posts.
            let byAuthor = try await server.json("GET", "/v1/posts?authorId=\(author.id)&q=\(Self.encode("호떡 가게"))&limit=100", token: author.token)
            #expect(Set(byAuthor.items.compactMap { $0["id"] as? String }) == [visible, hidden, removed])
        }
    }

    @Test("an edit is reflected in the next search; so are alt texts, their changes and their images taken off")
    func editsAndAltText() async throws {
        try await withMediaServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let post = try await Self.post(server, author, region: region, "수제비 한 그릇")
            #expect(try await Self.search(server, "수제비", region: region) == [post])
            let edit = try await server.json("PATCH", "/v1/posts/\(post)", token: author.token, ["body": "칼국수 한 그릇"])
            #expect(edit.status == 200)
            #expect(try await Self.search(server, "수제비", region: region).isEmpty)
            #expect(try await Self.search(server, "칼국수", region: region) == [post])

            let upload = try await server.upload(try await MediaFixtures.jpeg, alt: "한강 노을 사진", token: author.token)
            try #require(upload.status == 201, "\(upload.text)")
            let media = try #require(upload.object["id"] as? String)
            #expect(try await server.json("PATCH", "/v1/posts/\(post)", token: author.token, ["mediaIds": [media]]).status == 200)
            #expect(try await Self.search(server, "노을", region: region) == [post])
            #expect(try await Self.search(server, "칼국수 노을", region: region) == [post])
            #expect(try await server.json("PATCH", "/v1/media/\(media)", token: author.token, ["alt": "ＳＵＮＳＥＴ over the river"]).status == 200)
            #expect(try await Self.search(server, "노을", region: region).isEmpty)
            #expect(try await Self.search(server, "sunset", region: region) == [post])
            #expect(try await server.json("PATCH", "/v1/posts/\(post)", token: author.token, ["mediaIds": [String]()]).status == 200)
            #expect(try await Self.search(server, "sunset", region: region).isEmpty)
            // A writer that does not index (an older binary mid-upgrade, a hand-made UPDATE) leaves no stale document:
            // the post is found by neither text until `weatherboard migrate` indexes it again.
            try await server.dependencies.database.execute("UPDATE posts SET body = '팥죽 한 그릇' WHERE id = \(Int(post)!)")
            #expect(try await Self.search(server, "칼국수", region: region).isEmpty)
            #expect(try await Self.search(server, "팥죽", region: region).isEmpty)
            #expect(try await PostgresPostStore.backfillSearch(on: server.dependencies.database) >= 1)
            #expect(try await Self.search(server, "팥죽", region: region) == [post])
            // A new post with an image and its alt text at once.
            let second = try await server.upload(try await MediaFixtures.jpeg, alt: "장마철 우산", token: author.token)
            let created = try await server.json(
                "POST", "/v1/posts", token: author.token,
                ["weatherType": "rain", "category": "place", "body": "비 오는 날", "regionId": region, "mediaIds": [try #require(second.object["id"] as? String)]]
            )
            #expect(created.status == 201)
            #expect(try await Self.search(server, "우산", region: region) == [try #require(created.object["id"] as? String)])
        }
    }

    @Test("pages walk newest first across the index's windows, with inserts between pages: no post twice, none skipped")
    func windows() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let database = server.dependencies.database
            var expected: [String] = []
            // Gaps in the ids of every size the windows have (1,024 × 4^k): the matches sit in different windows.
            for gap in [0, 3, 1_500, 5_000, 20_000, 70_000, 300_000, 1_200_000, 5_000_000, 1] {
                if gap > 0 { _ = try await database.query("SELECT setval('posts_id_seq', nextval('posts_id_seq') + \(gap))") }
                expected.append(try await Self.post(server, author, region: region, "군고구마 \(gap)"))
                _ = try await Self.post(server, author, region: region, "군밤 \(gap)")
            }
            var seen: [String] = []
            var cursor: String?
            repeat {
                let path = "/v1/posts?regionId=\(region)&limit=3&q=\(Self.encode("군고구마"))" + (cursor.map { "&cursor=\($0)" } ?? "")
                let page = try await server.json("GET", path)
                try #require(page.status == 200, "\(page.text)")
                seen += page.items.compactMap { $0["id"] as? String }
                cursor = page.object["nextCursor"] as? String
                _ = try await Self.post(server, author, region: region, "군고구마 between")
            } while cursor != nil && seen.count < 100
            #expect(seen == expected.reversed(), "\(seen)")
        }
    }

    @Test("a parallel burst of creates, edits and searches: every search afterwards finds exactly the posts' last words")
    func burst() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            let words = ["호박죽", "단팥빵", "꽈배기", "찐빵"]
            // 40 creates at once, each with one of four words.
            let created = try await withThrowingTaskGroup(of: (String, String).self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let word = words[index % words.count]
                        return (try await Self.post(server, author, region: region, "\(word) \(index)"), word)
                    }
                }
                return try await group.reduce(into: [String: String]()) { $0[$1.0] = $1.1 }
            }
            #expect(created.count == 40)
            // Each post edited to the next word while searches run alongside.
            let final = try await withThrowingTaskGroup(of: (String, String)?.self) { group in
                for (id, word) in created {
                    group.addTask {
                        let next = words[(words.firstIndex(of: word)! + 1) % words.count]
                        let response = try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, ["body": "\(next) 다시"])
                        try #require(response.status == 200, "\(response.text)")
                        return (id, next)
                    }
                    group.addTask {
                        let page = try await server.json("GET", "/v1/posts?regionId=\(region)&q=\(Self.encode(word))&limit=100")
                        try #require(page.status == 200)
                        return nil
                    }
                }
                return try await group.reduce(into: [String: String]()) { if let (id, word) = $1 { $0[id] = word } }
            }
            for word in words {
                let expected = Set(final.filter { $0.value == word }.keys)
                #expect(Set(try await Self.search(server, word, region: region)) == expected, "\(word)")
            }
            #expect(try await Self.search(server, "다시", region: region).count == 40)
            // Absurd sizes: a query of 5,000 characters, a page of 0 or a huge one.
            #expect(try await server.json("GET", "/v1/posts?q=\(String(repeating: "a", count: 5_000))").status == 422)
            #expect(try await server.json("GET", "/v1/posts?q=a&limit=0").status == 400)
            let huge = try await server.json("GET", "/v1/posts?regionId=\(region)&q=\(Self.encode("다시"))&limit=99999999999999999999")
            #expect(huge.status == 200 && huge.items.count == 40)
        }
    }

    @Test("property: for random posts and random substrings of them, search finds exactly what a substring scan of the folded texts finds")
    func property() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let region = try await Self.region(server)
            let author = try await server.anonymousAccount()
            var generator = SystemRandomNumberGenerator()
            // A small alphabet, so substrings repeat across posts: Hangul, Latin of both cases and widths, a zero-width
            // space, a soft hyphen, an emoji, LIKE's characters.
            let alphabet = Array("가나다파전막걸리 aAbＢcC\u{200B}\u{AD}☔%_\\ ")
            var texts: [String: String] = [:]
            for _ in 0..<40 {
                let body = String((0..<Int.random(in: 3...18, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
                let trimmed = body.trimmingCharacters(in: .whitespaces)
                guard !SearchTerms.fold(trimmed).isEmpty else { continue }
                texts[try await Self.post(server, author, region: region, trimmed)] = trimmed
            }
            for _ in 0..<40 {
                // A random substring of a random post, or of the alphabet.
                let source = Array(texts.values.randomElement(using: &generator)!)
                let start = Int.random(in: 0..<source.count, using: &generator)
                let q = String(source[start..<min(source.count, start + Int.random(in: 1...4, using: &generator))])
                guard let terms = try? SearchTerms(parsing: q) else { continue }
                let expected = Set(texts.filter { terms.matches(folded: ["", SearchTerms.fold($0.value)]) }.keys)
                let found = try await Self.search(server, q, region: region)
                #expect(Set(found) == expected, "q=\(q.unicodeScalars.map { String($0.value, radix: 16) }): found \(found.count), expected \(expected.count)")
            }
        }
    }
}
