import CurlClient
import Foundation
import Testing

/// CONTRACT §1's rule as a table: every kind of reader × every state of a post × every route that acts on one post,
/// over HTTP against the real database. The expected answers are written here from the contract, not asked of the
/// server's `Visibility`, so a change to the rule fails this test.
@Suite("Visibility table: readers × states × routes")
struct VisibilityTableTests {
    enum Reader: String, CaseIterable {
        case anonymous, member, author, moderator, bannedModerator
    }

    enum State: String, CaseIterable {
        case visible, held, hidden, removed, deleted
    }

    /// What a read by id answers: nil for 404, else the `status` field shown (or "-" for none).
    static func read(_ reader: Reader, _ state: State) -> String? {
        switch (reader, state) {
        case (.moderator, .held): "hidden"
        case (.moderator, _): state.rawValue
        case (.author, .deleted): nil
        case (.author, .held): "visible"
        case (.author, _): state.rawValue
        case (_, .visible): "-"
        default: nil
        }
    }

    /// A reply's answer: 201, 401, 403, 404. A banned account writes nothing, whatever the post (403 `account_banned`
    /// for every id, so it learns nothing either).
    static func reply(_ reader: Reader, _ state: State) -> Int {
        if reader == .anonymous { return 401 }
        if reader == .bannedModerator { return 403 }
        guard read(reader, state) != nil else { return 404 }
        switch reader {
        case .author: return state == .visible || state == .held ? 201 : 403
        default: return state == .visible ? 201 : 403
        }
    }

    /// The replies list: nil for 404, else how many of the post's replies it holds (one, or none when the post's replies
    /// are out of the reader's view).
    static func replies(_ reader: Reader, _ state: State) -> Int? {
        guard read(reader, state) != nil else { return nil }
        if reader == .moderator { return 1 }
        return state == .visible || (reader == .author && state == .held) ? 1 : 0
    }

    /// A PATCH of the post's body: 200 for its author while not deleted; 403 for anyone else who can see it; 404.
    static func edit(_ reader: Reader, _ state: State) -> Int {
        if reader == .anonymous { return 401 }
        if reader == .bannedModerator { return 403 }
        guard read(reader, state) != nil, state != .deleted else { return 404 }
        return reader == .author ? 200 : 403
    }

    @Test("read by id, reply, list replies and edit answer as CONTRACT §1 says for every reader and state")
    func table() async throws {
        try await withTestServer(configure: { $0.rateLimitsEnabled = false }) { server in
            let term = "tableterm\(UInt32.random(in: 0...UInt32.max))"
            _ = try await server.dependencies.moderation.addTerm(term)
            let author = try await server.anonymousAccount()
            let member = try await server.anonymousAccount()
            let (moderator, bannedModerator) = try await server.staff()
            let tokens: [Reader: String?] = [.anonymous: nil, .member: member.token, .author: author.token, .moderator: moderator.token,
                                             .bannedModerator: bannedModerator.token]
            let database = server.dependencies.database
            var failures: [String] = []
            for state in State.allCases {
                // One post per state, with one reply by another account while it was visible.
                let created = try await server.createPost(author, body: "표 \(state.rawValue)")
                let id = try #require(created["id"] as? String)
                #expect(try await server.json("POST", "/v1/posts/\(id)/replies", token: member.token, ["body": "답"]).status == 201)
                switch state {
                case .visible: break
                case .held: #expect(try await server.json("PATCH", "/v1/posts/\(id)", token: author.token, ["body": "표 \(term)"]).status == 200)
                case .hidden: try await database.execute("UPDATE posts SET status = 'hidden', hidden_reason = 'reports' WHERE id = \(Int(id)!)")
                case .removed: try await database.execute("UPDATE posts SET status = 'removed', hidden_reason = NULL WHERE id = \(Int(id)!)")
                case .deleted: #expect(try await server.json("DELETE", "/v1/posts/\(id)", token: author.token).status == 204)
                }
                for reader in Reader.allCases {
                    let token = tokens[reader] ?? nil
                    let where_ = "\(reader.rawValue) on a \(state.rawValue) post"
                    let read = try await server.json("GET", "/v1/posts/\(id)", token: token)
                    if let status = Self.read(reader, state) {
                        if read.status != 200 || (read.object["status"] as? String ?? "-") != status {
                            failures.append("\(where_): read \(read.status) \(read.object["status"] ?? "-"), wanted 200 \(status)")
                        }
                    } else if read.status != 404 {
                        failures.append("\(where_): read \(read.status), wanted 404")
                    }
                    let list = try await server.json("GET", "/v1/posts/\(id)/replies", token: token)
                    if let count = Self.replies(reader, state) {
                        if list.status != 200 || list.items.count != count { failures.append("\(where_): replies \(list.status) \(list.items.count), wanted \(count)") }
                    } else if list.status != 404 {
                        failures.append("\(where_): replies \(list.status), wanted 404")
                    }
                    let reply = try await server.json("POST", "/v1/posts/\(id)/replies", token: token, ["body": "\(reader.rawValue) 답글"])
                    if reply.status != Self.reply(reader, state) { failures.append("\(where_): reply \(reply.status), wanted \(Self.reply(reader, state))") }
                    let edit = try await server.json("PATCH", "/v1/posts/\(id)", token: token, ["body": "표 \(state.rawValue) \(reader.rawValue) \(state == .held ? term : "")"])
                    if edit.status != Self.edit(reader, state) { failures.append("\(where_): edit \(edit.status), wanted \(Self.edit(reader, state))") }
                    // A reply the author made on their own held post is theirs to see; the list above counted before it.
                    if reply.status == 201, let replyID = reply.object["id"] as? String {
                        try await database.execute("UPDATE replies SET deleted_at = now() WHERE id = \(Int(replyID)!)")
                    }
                }
            }
            #expect(failures.isEmpty, "\(failures.count) answers differ from CONTRACT §1:\n\(failures.joined(separator: "\n"))")
        }
    }
}
