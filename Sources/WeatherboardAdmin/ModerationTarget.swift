import ArgumentParser
import Vocabulary

/// What a moderator acts on (CONTRACT §13): a post or a reply. On the command line `123` and `post:123` name a post,
/// `reply:123` a reply; the id is a server id (a positive decimal number without sign or leading zero).
enum ModerationTarget: Equatable, Sendable, CustomStringConvertible {
    case post(String)
    case reply(String)

    /// The help of an argument that takes one.
    static let help = ArgumentHelp("The post's id (123 or post:123), or reply:<id> for a reply.", valueName: "target")

    /// Parses a command line's target; anything else is a usage error (exit 64) saying what was expected.
    init(_ text: String) throws(AdminError) {
        let (kind, id): (String, Substring) =
            if let colon = text.firstIndex(of: ":") { (String(text[..<colon]), text[text.index(after: colon)...]) } else { ("post", text[...]) }
        guard Self.isServerID(id) else { throw Self.invalid(text) }
        switch kind {
        case "post": self = .post(String(id))
        case "reply": self = .reply(String(id))
        default: throw Self.invalid(text)
        }
    }

    /// `validate()` of a command taking a target: the same check, as swift-argument-parser reports it.
    static func validate(_ text: String) throws {
        do {
            _ = try ModerationTarget(text)
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// `post:123`, `reply:45`: what `queue` shows and the commands take.
    var description: String {
        switch self {
        case .post(let id): "post:\(id)"
        case .reply(let id): "reply:\(id)"
        }
    }

    /// `post 123`, `reply 45`: as the outcome lines say it.
    var spoken: String {
        switch self {
        case .post(let id): "post \(id)"
        case .reply(let id): "reply \(id)"
        }
    }

    /// An id as the server gives them (`Vocabulary.CanonicalID`): any other text names nothing there, so it is refused
    /// here rather than sent.
    private static func isServerID(_ id: Substring) -> Bool {
        CanonicalID.parse(id) != nil
    }

    /// The text quoted with Swift's escapes (`\0`, `\u{1B}`), so no control character reaches the terminal.
    private static func invalid(_ text: String) -> AdminError {
        AdminError(.usage, "invalid target \(text.debugDescription): expected a post id (123 or post:123) or a reply id (reply:123)")
    }
}
