import Database
import Foundation
import Vocabulary

/// The order of a post list and how it is paged (CONTRACT §9, `sort=`): everything a reader needs to know about
/// `new`, `top` and `hot` is here; the scores themselves are stored on `posts` and kept exact by sql/0021.
///
/// - `new`: newest first, `p.id DESC`; its cursor is `c1:<id>` (`Cursor.idTag`), the one every list had before.
/// - `top`: most trusted marks first, then newest: `trusted_helpful_count DESC, id DESC`; cursor `t1:<marks>:<id>`.
/// - `hot`: `hot_score DESC, id DESC`, where `hot_score = log10(max(trusted marks, 1)) + createdAt / 45000`
///   (`post_hot_score`, a stored generated column); cursor `h1:<bits of the score>:<id>`, the score's exact
///   IEEE 754 bits, so a page resumes at exactly the stored value.
///
/// Every order is a keyset: a page starts strictly after the last row of the previous one in the order's own key,
/// written as a row comparison that the index of the filter shape (sql/0004, 0017, 0021) answers in order. A
/// cursor names its order: one of another order, or anything the server could not have written, is refused (400).
public enum PostSort: String, Sendable, CaseIterable {
    case new, top, hot

    /// Where a ranked page resumes: the last row's score and id.
    public enum Position: Sendable, Equatable {
        case top(trustedMarks: Int, id: Int)
        case hot(score: Double, id: Int)
    }

    /// What a cursor of this order resumes after.
    public enum After: Sendable, Equatable {
        case id(Int)
        case position(Position)
    }

    static let topTag = "t1"
    static let hotTag = "h1"

    /// The cursor after `post` in this order.
    public func cursor(after post: Post) -> String {
        switch self {
        case .new: Cursor.encode(post.id)
        case .top: Cursor.encode(keys: [post.trustedHelpfulCount, post.id], tag: Self.topTag)
        // A hot score is positive (Unix seconds / 45000 plus a non-negative log), so its bits fit a non-negative Int.
        case .hot: Cursor.encode(keys: [Int(truncatingIfNeeded: post.hotScore.bitPattern), post.id], tag: Self.hotTag)
        }
    }

    /// The position in exactly what `cursor(after:)` writes for this order; nil for anything else (a cursor of
    /// another order, a non-finite or negative score, a zero id).
    public func decode(cursor text: some StringProtocol) -> After? {
        switch self {
        case .new:
            return Cursor.decode(text).map(After.id)
        case .top:
            guard let keys = Cursor.decode(text, tag: Self.topTag, count: 2), keys[1] > 0 else { return nil }
            return .position(.top(trustedMarks: keys[0], id: keys[1]))
        case .hot:
            guard let keys = Cursor.decode(text, tag: Self.hotTag, count: 2), keys[1] > 0 else { return nil }
            let score = Double(bitPattern: UInt64(keys[0]))
            guard score.isFinite, score > 0 else { return nil }
            return .position(.hot(score: score, id: keys[1]))
        }
    }

    // MARK: SQL parts

    /// The order's key columns of `posts p`, ahead of the filter shape's leading columns (`PostgresPostStore.order`).
    var orderKey: String {
        switch self {
        case .new: "p.id DESC"
        case .top: "p.trusted_helpful_count DESC, p.id DESC"
        case .hot: "p.hot_score DESC, p.id DESC"
        }
    }

    /// The score column a merged page (member and moderator lists) orders its candidates by; nil for `new`.
    var scoreColumn: String? {
        switch self {
        case .new: nil
        case .top: "trusted_helpful_count"
        case .hot: "hot_score"
        }
    }

    /// The order of rows already chosen (`alias.score DESC, alias.id DESC`).
    func order(of alias: String) -> String {
        guard let score = scoreColumn else { return "\(alias).id DESC" }
        return "\(alias).\(score) DESC, \(alias).id DESC"
    }

    /// Strictly after `position`, in this order's key: a row comparison, read as an index bound. The marks are
    /// compared as int8 (int4 against int8 is in the btree operator family), so a forged huge count is no overflow.
    static func keyset(_ position: Position) -> SQLQuery {
        switch position {
        case .top(let marks, let id): " AND (p.trusted_helpful_count, p.id) < (\(marks), \(id))"
        case .hot(let score, let id): " AND (p.hot_score, p.id) < (\(score), \(id))"
        }
    }
}
