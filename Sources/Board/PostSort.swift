import Database
import Foundation
import Vocabulary

/// The order of a post list and how it is paged (CONTRACT §9, `sort=`): everything a reader needs to know about
/// `new`, `top`, `hot` and `fit` is here; the scores themselves are stored on `posts` and kept exact by sql/0021.
///
/// - `new`: newest first, `p.id DESC`; its cursor is `c1:<id>` (`Cursor.idTag`), the one every list had before.
/// - `top`: most trusted marks first, then newest: `trusted_helpful_count DESC, id DESC`; cursor `t1:<marks>:<id>`.
/// - `hot`: `hot_score DESC, id DESC`, where `hot_score = log10(max(trusted marks, 1)) + createdAt / 45000`
///   (`post_hot_score`, a stored generated column); cursor `h1:<bits of the score>:<id>`, the score's exact
///   IEEE 754 bits, so a page resumes at exactly the stored value.
/// - `fit`: for a reader outside in a band (`PostQuery.fitBand`), the posts of that band first, then of its
///   neighbours, then of the other bands, then those without conditions (`FitGroup`), each group in `hot` order.
///   Each band is walked by itself (the band as a range, the `…_fit_idx` indexes of sql/0022, in `hot` order),
///   the walks of a group merged, the groups read in turn until the page is full (`PostgresPostStore.fitList`).
///   Cursor `f1:<band>:<group>:<bits of the score>:<id>`: the band the walk started in travels with it, so a walk
///   begun in a `mild` afternoon ends in `mild` order even if the band outside changes between two pages.
///
/// Every order is a keyset: a page starts strictly after the last row of the previous one in the order's own key,
/// written as a row comparison that the index of the filter shape (sql/0004, 0017, 0021) answers in order. A
/// cursor names its order: one of another order, or anything the server could not have written, is refused (400).
public enum PostSort: String, Sendable, CaseIterable {
    case new, top, hot, fit

    /// Where a ranked page resumes: the last row's score and id.
    public enum Position: Sendable, Equatable {
        case top(trustedMarks: Int, id: Int)
        case hot(score: Double, id: Int)
        /// A `fit` page resumes in `band`'s order, after the row `(score, id)` of group `group`.
        case fit(band: FeelsLikeBand, group: FitGroup, score: Double, id: Int)
    }

    /// The groups of the `fit` order, in order, for a reader outside in some band.
    public enum FitGroup: Int, Sendable, CaseIterable, Comparable {
        case sameBand, neighbours, otherBands, noConditions

        /// The group of a post with conditions in `band` (nil: none) for a reader in `outside`.
        public init(band: FeelsLikeBand?, outside: FeelsLikeBand) {
            guard let band else { self = .noConditions; return }
            if band == outside { self = .sameBand } else if outside.neighbours.contains(band) { self = .neighbours } else { self = .otherBands }
        }

        /// The bands this group holds for a reader in `outside` (nil: posts without conditions).
        public func bands(outside: FeelsLikeBand) -> [FeelsLikeBand?] {
            switch self {
            case .sameBand: [outside]
            case .neighbours: outside.neighbours
            case .otherBands: FeelsLikeBand.allCases.filter { $0 != outside && !outside.neighbours.contains($0) }
            case .noConditions: [nil]
            }
        }

        public static func < (a: FitGroup, b: FitGroup) -> Bool { a.rawValue < b.rawValue }
    }

    /// What a cursor of this order resumes after.
    public enum After: Sendable, Equatable {
        case id(Int)
        case position(Position)
    }

    static let topTag = "t1"
    static let hotTag = "h1"
    static let fitTag = "f1"

    /// The cursor after `post` in this order; a `fit` walk's cursor carries the band it ranks for (`outside`).
    public func cursor(after post: Post, outside: FeelsLikeBand? = nil) -> String {
        // A hot score is positive (Unix seconds / 45000 plus a non-negative log), so its bits fit a non-negative Int.
        let hotBits = Int(truncatingIfNeeded: post.hotScore.bitPattern)
        switch self {
        case .new: return Cursor.encode(post.id)
        case .top: return Cursor.encode(keys: [post.trustedHelpfulCount, post.id], tag: Self.topTag)
        case .hot: return Cursor.encode(keys: [hotBits, post.id], tag: Self.hotTag)
        case .fit:
            // `PostService.list` refuses a `fit` list without a band; `.mild` only keeps this total.
            let outside = outside ?? .mild
            let band = FeelsLikeBand.allCases.firstIndex(of: outside) ?? 0
            let group = FitGroup(band: post.conditions?.band, outside: outside)
            return Cursor.encode(keys: [band, group.rawValue, hotBits, post.id], tag: Self.fitTag)
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
            guard let keys = Cursor.decode(text, tag: Self.hotTag, count: 2), keys[1] > 0, let score = Self.score(bits: keys[0]) else { return nil }
            return .position(.hot(score: score, id: keys[1]))
        case .fit:
            guard let keys = Cursor.decode(text, tag: Self.fitTag, count: 4), keys[3] > 0,
                  FeelsLikeBand.allCases.indices.contains(keys[0]), let group = FitGroup(rawValue: keys[1]),
                  let score = Self.score(bits: keys[2])
            else { return nil }
            return .position(.fit(band: FeelsLikeBand.allCases[keys[0]], group: group, score: score, id: keys[3]))
        }
    }

    /// A stored hot score from its bits: finite and positive, or nil.
    static func score(bits: Int) -> Double? {
        let score = Double(bitPattern: UInt64(bits))
        return score.isFinite && score > 0 ? score : nil
    }

    // MARK: SQL parts

    /// The order's key columns of `posts p`, ahead of the filter shape's leading columns (`PostgresPostStore.order`).
    var orderKey: String {
        switch self {
        case .new: "p.id DESC"
        case .top: "p.trusted_helpful_count DESC, p.id DESC"
        case .hot: "p.hot_score DESC, p.id DESC"
        // One band's walk (`PostgresPostStore.fitGroupQuery`): the band (a `PlanTrick.equal` range), then `hot` order.
        case .fit: "p.conditions_band, p.hot_score DESC, p.id DESC"
        }
    }

    /// The score column a merged page (member and moderator lists) orders its candidates by; nil for `new`.
    var scoreColumn: String? {
        switch self {
        case .new: nil
        case .top: "trusted_helpful_count"
        case .hot, .fit: "hot_score"
        }
    }

    /// The order of rows already chosen (`alias.score DESC, alias.id DESC`); a `fit` page is one group's, in `hot`
    /// order (`PostgresPostStore.fitList` reads the groups in turn).
    func order(of alias: String) -> String {
        guard let score = scoreColumn else { return "\(alias).id DESC" }
        return "\(alias).\(score) DESC, \(alias).id DESC"
    }

    /// Strictly after `position`, in this order's key: a row comparison, read as an index bound. The marks are
    /// compared as int8 (int4 against int8 is in the btree operator family), so a forged huge count is no overflow.
    static func keyset(_ position: Position) -> SQLQuery {
        switch position {
        case .top(let marks, let id): " AND (p.trusted_helpful_count, p.id) < (\(marks), \(id))"
        case .hot(let score, let id), .fit(_, _, let score, let id): " AND (p.hot_score, p.id) < (\(score), \(id))"
        }
    }
}
