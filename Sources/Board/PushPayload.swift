import Foundation
import Vocabulary

/// What a notification carries to the phone (CONTRACT §14): the `aps` alert, localized to the device's language, and
/// the `wb` object the app's notification extension reads (`openapi.yaml`'s `Push…` components). Rendered once per
/// language; the queue stores the bytes, so a resend carries exactly what the first try did.
public struct PushPayload: Sendable, Equatable {
    public enum Content: Sendable, Equatable {
        /// Another account's reply to the recipient's post became visible.
        case reply(postID: Int, replyID: Int, replierName: String, body: String)
        /// Replies folded by the hourly cap or the quiet hours: how many, on which posts.
        case replies(count: Int, postIDs: [Int])
        /// A decision resolved a report the recipient filed. Never who decided.
        case reportOutcome(reportID: Int, outcome: Outcome, title: String?, onReply: Bool)
        /// A moderator removed or restored the recipient's post or reply.
        case moderation(postID: Int, replyID: Int?, action: Action, title: String?)
        /// `weatherboard push test`: an operator checking delivery.
        case test
    }

    /// A report's outcome as the reporter is told it.
    public enum Outcome: String, Sendable, Equatable {
        case removed, dismissed, restored

        /// The outcome of a decision's action.
        public init(_ action: ModerationAction) {
            switch action {
            case .remove: self = .removed
            case .dismiss: self = .dismissed
            case .restore: self = .restored
            }
        }
    }

    /// The decision's own word (`wb.action`).
    public enum Action: String, Sendable, Equatable {
        case remove, restore
    }

    public let content: Content
    public let language: Language

    public init(_ content: Content, language: Language) {
        self.content = content
        self.language = language
    }

    /// The most code points of a reply's body an alert shows.
    public static let bodyCodePoints = 100

    /// `text`'s first `limit` code points, ending in `…` when cut: never inside a code point.
    public static func excerpt(_ text: String, limit: Int = bodyCodePoints) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > limit else { return text }
        var cut = String.UnicodeScalarView(scalars.prefix(limit))
        cut.append("…")
        return String(cut)
    }

    /// The alert's title and body.
    public var alert: (title: String, body: String) {
        let ko = language == .ko
        switch content {
        case .reply(_, _, let replierName, let body):
            return (replierName, Self.excerpt(body))
        case .replies(let count, _):
            return (ko ? "날씨별 게시판" : "Weatherboard", ko ? "새 댓글 \(count)개" : "\(count) new \(count == 1 ? "reply" : "replies")")
        case .reportOutcome(_, let outcome, let title, let onReply):
            let what = Self.quoted(title, onReply: onReply, ko: ko)
            let result: String = switch (outcome, ko) {
            case (.removed, true): "삭제되었습니다"
            case (.dismissed, true): "규칙 위반이 아닌 것으로 판단되었습니다"
            case (.restored, true): "다시 공개되었습니다"
            case (.removed, false): "was removed"
            case (.dismissed, false): "was found to break no rule"
            case (.restored, false): "was restored"
            }
            return (ko ? "신고 처리 결과" : "Your report", ko ? "신고하신 \(what): \(result)" : "The \(what) you reported \(result)")
        case .moderation(_, let replyID, let action, let title):
            let what = Self.quoted(title, onReply: replyID != nil, ko: ko)
            let result: String = switch (action, ko) {
            case (.remove, true): "운영진이 삭제했습니다"
            case (.restore, true): "운영진이 다시 공개했습니다"
            case (.remove, false): "was removed by a moderator"
            case (.restore, false): "was restored by a moderator"
            }
            return (ko ? "운영 알림" : "Moderation", ko ? "회원님의 \(what): \(result)" : "Your \(what) \(result)")
        case .test:
            return (ko ? "날씨별 게시판" : "Weatherboard", ko ? "테스트 알림입니다." : "This is a test notification.")
        }
    }

    /// "post “title”" / "글 「title」", or the bare noun without a title.
    static func quoted(_ title: String?, onReply: Bool, ko: Bool) -> String {
        let noun = onReply ? (ko ? "댓글" : "reply") : (ko ? "글" : "post")
        guard let title, !title.isEmpty else { return noun }
        let short = excerpt(title, limit: 40)
        return ko ? "\(noun) 「\(short)」" : "\(noun) “\(short)”"
    }

    /// The `wb` object: `kind` and the ids the app opens (as the API's strings).
    public var wb: [String: Any] {
        switch content {
        case .reply(let postID, let replyID, _, _):
            ["kind": "reply", "postId": String(postID), "replyId": String(replyID)]
        case .replies(_, let postIDs):
            ["kind": "replies", "postIds": postIDs.map(String.init)]
        case .reportOutcome(let reportID, let outcome, _, _):
            ["kind": "reportOutcome", "reportId": String(reportID), "outcome": outcome.rawValue]
        case .moderation(let postID, let replyID, let action, _):
            ["kind": "moderation", "postId": String(postID), "replyId": replyID.map(String.init) ?? NSNull(), "action": action.rawValue]
        case .test:
            ["kind": "test"]
        }
    }

    /// The `thread-id` that groups a post's notifications on the phone.
    public var threadID: String? {
        switch content {
        case .reply(let postID, _, _, _), .moderation(let postID, _, _, _): "post-\(postID)"
        case .replies, .reportOutcome, .test: nil
        }
    }

    /// The JSON APNs sends on: `{"aps": {"alert": {title, body}, "sound": "default", "thread-id"?}, "wb": {…}}`.
    public func json() -> [UInt8] {
        var aps: [String: Any] = ["alert": ["title": alert.title, "body": alert.body], "sound": "default"]
        if let threadID { aps["thread-id"] = threadID }
        // Strings, numbers, arrays and NSNull only: serialization cannot fail.
        let data = (try? JSONSerialization.data(withJSONObject: ["aps": aps, "wb": wb], options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return Array(data)
    }
}
