import ArgumentParser
import Foundation
import WeatherboardAPI

/// `review`: walks the queue one item (a post or a reply) at a time, each decided at its own endpoint. Single keys act
/// on a terminal; when standard input is not a terminal it reads one command a line (`d`, `r`, `b` then a reason line
/// and a days line, `s`, `q`), so a review can be scripted.
struct ReviewCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "review",
        abstract: "Walk the queue (posts and replies): d dismiss, r remove, b ban the author, s skip, q quit.",
        discussion: """
            Each item is shown as `show` shows it: a post, or a reply with the post it answers. \
            On a terminal each key acts at once. Otherwise standard input is read line by line: `d`, `r`, `s`, `q`, or \
            `b` followed by a line with the reason and a line with the days (empty for a permanent ban). \
            End of input quits.
            """
    )

    @OptionGroup var options: GlobalOptions

    mutating func run() async throws {
        let options = options
        try await CommandRunner.run {
            let client = try AdminSession.client(options)
            var review = Review(client: client, interactive: Terminal.isInteractive)
            try await review.walk()
        }
    }
}

/// One review session's state.
private struct Review {
    let client: AdminClient
    let interactive: Bool
    /// Items shown, by kind.
    var posts = 0
    var replies = 0
    var tally: [String: Int] = [:]

    init(client: AdminClient, interactive: Bool) {
        self.client = client
        self.interactive = interactive
    }

    enum Step { case next, quit }

    mutating func walk() async throws {
        var cursor: String? = nil
        walking: repeat {
            let (page, _) = try await client.queuePage(limit: 20, cursor: cursor)
            for item in page.items {
                guard let subject = item.subject else {
                    // A kind of item this version cannot decide on: said, and left in the queue.
                    Console.error(item.rendered())
                    continue
                }
                if case .reply = subject { replies += 1 } else { posts += 1 }
                Console.out("── \(posts + replies) ─────────────────────────────────────────")
                Console.out(item.rendered())
                if try await act(on: item, subject: subject) == .quit { break walking }
            }
            cursor = page.nextCursor
        } while cursor != nil
        Console.out(summary)
    }

    var summary: String {
        if posts + replies == 0 { return "the queue is empty" }
        let parts = ["dismissed", "removed", "banned", "skipped"].compactMap { key in tally[key].map { "\(key) \($0)" } }
        // `reviewed 3 posts`, `reviewed 1 reply`, `reviewed 2 posts and 1 reply`.
        let kinds = [(posts, "post", "posts"), (replies, "reply", "replies")].filter { $0.0 > 0 }.map { TextLayout.count($0.0, $0.1, plural: $0.2) }
        return "reviewed \(kinds.joined(separator: " and "))" + (parts.isEmpty ? "" : ": " + parts.joined(separator: ", "))
    }

    private mutating func act(on item: QueueItemResponse, subject: ModerationTarget) async throws -> Step {
        while true {
            Terminal.prompt("[d]ismiss [r]emove [b]an author [s]kip [q]uit > ")
            guard let key = try readCommand() else {
                Terminal.prompt("\n")
                return .quit
            }
            switch key {
            case "d", "r":
                let action = key == "d" ? "dismiss" : "remove"
                do {
                    Console.out(try await Decision.decide(client: client, target: subject, action: action, note: nil))
                    tally[action == "dismiss" ? "dismissed" : "removed", default: 0] += 1
                } catch let error as AdminError where error.kind == .notFound {
                    Console.error(error.message)
                }
                return .next
            case "b":
                // The item stays on screen afterwards, to be removed or dismissed.
                if try await banAuthor(of: item) == .quit { return .quit }
            case "s":
                tally["skipped", default: 0] += 1
                return .next
            case "q":
                return .quit
            case "":
                continue
            default:
                Console.error("unknown command \(key.debugDescription): d dismiss, r remove, b ban the author, s skip, q quit")
            }
        }
    }

    /// Asks for the reason and the days, then bans the author of the post or reply.
    private mutating func banAuthor(of item: QueueItemResponse) async throws -> Step {
        let author = item.subjectAuthor
        Terminal.prompt("ban \(TextLayout.singleLine(author.displayName)) (account \(author.id)); reason (empty cancels): ")
        guard let reason = Terminal.readLine()?.trimmingCharacters(in: .whitespaces) else { return .quit }
        if reason.isEmpty {
            Console.out("ban cancelled")
            return .next
        }
        var days: Int? = nil
        while true {
            Terminal.prompt("days (empty for a permanent ban): ")
            guard let line = Terminal.readLine()?.trimmingCharacters(in: .whitespaces) else { return .quit }
            if line.isEmpty { break }
            if let value = Int(line), (1...36_500).contains(value) {
                days = value
                break
            }
            Console.error("days must be a whole number from 1 to 36500, or empty")
        }
        Console.out(try await BanCommand.ban(client: client, accountId: author.id, days: days, reason: reason))
        tally["banned", default: 0] += 1
        return .next
    }

    /// `d`, `r`, `b`, `s`, `q` (or "" to ask again); nil at end of input.
    private func readCommand() throws -> String? {
        if interactive {
            guard let key = try Terminal.readKey() else { return nil }
            if key == "\u{3}" { return "q" }
            Terminal.prompt("\(key)\n")
            return key.isNewline ? "" : String(key).lowercased()
        }
        guard let line = Terminal.readLine() else { return nil }
        let trimmed = line.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed.first.map(String.init) ?? ""
    }
}
