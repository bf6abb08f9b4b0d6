import Board
import Foundation
import Testing
import Vocabulary

/// What each notification says (CONTRACT §14), in both languages, and the `wb` object the app reads.
@Suite("Push payloads")
struct PushPayloadTests {
    static func decoded(_ payload: PushPayload) throws -> (aps: [String: Any], wb: [String: Any]) {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(payload.json())) as? [String: Any])
        #expect(object.count == 2)
        return (try #require(object["aps"] as? [String: Any]), try #require(object["wb"] as? [String: Any]))
    }

    @Test("a reply: the replier's name, the body's first 100 code points (… when cut, never inside a code point), the post as thread")
    func reply() throws {
        let short = PushPayload(.reply(postID: 42, replyID: 913, replierName: "익명-k3x9", body: "어디 가게예요?"), language: .ko)
        let (aps, wb) = try Self.decoded(short)
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "익명-k3x9")
        #expect(alert["body"] as? String == "어디 가게예요?")
        #expect(aps["thread-id"] as? String == "post-42")
        #expect(aps["sound"] as? String == "default")
        #expect(wb as NSDictionary == ["kind": "reply", "postId": "42", "replyId": "913"] as NSDictionary)

        let exactly = String(repeating: "가", count: 100)
        #expect(PushPayload.excerpt(exactly) == exactly)
        let long = String(repeating: "가", count: 101)
        #expect(PushPayload.excerpt(long) == String(repeating: "가", count: 100) + "…")
        // A family emoji is five code points: a cut may fall between them, never inside one, and the JSON stays valid.
        let family = String(repeating: "👩‍👩‍👧", count: 30)
        let cut = PushPayload.excerpt(family)
        #expect(cut.unicodeScalars.count == 101)
        #expect(cut.hasSuffix("…"))
        let (cutAPS, _) = try Self.decoded(PushPayload(.reply(postID: 1, replyID: 2, replierName: "x", body: family), language: .en))
        #expect((cutAPS["alert"] as? [String: Any])?["body"] as? String == cut)
    }

    @Test("the folded summary, a report's outcome and a moderation notice, in Korean and English; a report's never names who decided")
    func otherKinds() throws {
        let folded = PushPayload(.replies(count: 3, postIDs: [42, 7]), language: .ko)
        #expect(folded.alert.body == "새 댓글 3개")
        #expect(PushPayload(.replies(count: 3, postIDs: [42]), language: .en).alert.body == "3 new replies")
        #expect(PushPayload(.replies(count: 1, postIDs: [42]), language: .en).alert.body == "1 new reply")
        #expect(try Self.decoded(folded).wb as NSDictionary == ["kind": "replies", "postIds": ["42", "7"]] as NSDictionary)
        #expect(folded.threadID == nil)

        let outcome = PushPayload(.reportOutcome(reportID: 5, outcome: PushPayload.Outcome(.remove), title: "광고", onReply: false), language: .ko)
        #expect(outcome.alert.body == "신고하신 글 「광고」: 삭제되었습니다")
        #expect(try Self.decoded(outcome).wb as NSDictionary == ["kind": "reportOutcome", "reportId": "5", "outcome": "removed"] as NSDictionary)
        let english = PushPayload(.reportOutcome(reportID: 5, outcome: .dismissed, title: nil, onReply: true), language: .en)
        #expect(english.alert.body == "The reply you reported was found to break no rule")
        #expect(PushPayload.Outcome(.restore) == .restored && PushPayload.Outcome(.dismiss) == .dismissed)

        let removed = PushPayload(.moderation(postID: 42, replyID: nil, action: .remove, title: "비 오는 날 파전"), language: .en)
        #expect(removed.alert.body == "Your post “비 오는 날 파전” was removed by a moderator")
        let (aps, wb) = try Self.decoded(removed)
        #expect(aps["thread-id"] as? String == "post-42")
        #expect(wb["kind"] as? String == "moderation" && wb["action"] as? String == "remove" && wb["replyId"] is NSNull)
        let restoredReply = PushPayload(.moderation(postID: 42, replyID: 9, action: .restore, title: nil), language: .ko)
        #expect(restoredReply.alert.body == "회원님의 댓글: 운영진이 다시 공개했습니다")
        #expect(try Self.decoded(restoredReply).wb["replyId"] as? String == "9")
    }

    @Test("the largest inputs stay far under APNs's 4 KB: a 1,000-character reply, a 100-character title, a long name")
    func sizes() {
        let longest = [
            PushPayload(.reply(postID: Int.max, replyID: Int.max, replierName: String(repeating: "가", count: 30), body: String(repeating: "😀", count: 1000)), language: .ko),
            PushPayload(.reportOutcome(reportID: Int.max, outcome: .restored, title: String(repeating: "가", count: 100), onReply: false), language: .ko),
            PushPayload(.moderation(postID: Int.max, replyID: Int.max, action: .restore, title: String(repeating: "가", count: 100)), language: .ko),
            PushPayload(.replies(count: 10_000, postIDs: Array(repeating: Int.max, count: 30)), language: .en),
        ]
        for payload in longest { #expect(payload.json().count < 4096, "\(payload.json().count) bytes") }
    }
}
