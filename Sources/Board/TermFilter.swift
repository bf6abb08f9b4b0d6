import Foundation
import Synchronization

/// The blocked-term filter: substring matching after the same folding of both the term and the text
/// (CONTRACT §5): NFKC normalization, case folding and removal of default-ignorable code points, so
/// `ｂａｄ`, `BAD`, `b\u{200B}ad` and `b\u{AD}ad` all match `bad`, and Hangul written with conjoining jamo
/// matches its precomposed form. Terms are cached for a few seconds, so a term added by an operator
/// applies to every server instance almost at once without a query per post.
public final class TermFilter: ContentFilter {
    private let load: @Sendable () async throws -> [String]
    private let cache: TermCache
    private let refreshSeconds: Double

    public init(refreshSeconds: Double = 5, load: @escaping @Sendable () async throws -> [String]) {
        self.load = load
        self.refreshSeconds = refreshSeconds
        self.cache = TermCache()
    }

    /// The folded form both terms (`addTerm` stores it) and texts are compared in.
    public static func normalize(_ text: String) -> String {
        var folded = TextRules.normalize(text)
        // Twice: case folding can produce text NFKC changes again (and the reverse), and a default-ignorable
        // code point can hide a compatibility sequence; the second pass is a no-op for almost all text.
        for _ in 0..<2 {
            folded = removingDefaultIgnorables(folded).precomposedStringWithCompatibilityMapping
            folded = caseFolded(folded).precomposedStringWithCompatibilityMapping
        }
        return folded
    }

    /// Without Default_Ignorable_Code_Point scalars (zero-width space and joiners, soft hyphen, variation
    /// selectors, word joiner, BOM, Hangul fillers, …), which render as nothing and so can split a term.
    static func removingDefaultIgnorables(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.properties.isDefaultIgnorableCodePoint }) else { return text }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: text.unicodeScalars.lazy.filter { !$0.properties.isDefaultIgnorableCodePoint })
        return String(scalars)
    }

    /// Full case folding, locale-independent: lower-casing the upper-cased text folds `ß`/`ẞ` to `ss`, final
    /// sigma to `σ` and the other characters whose lower case alone would not meet.
    static func caseFolded(_ text: String) -> String {
        text.uppercased().lowercased()
    }

    public func shouldHold(_ texts: [String]) async throws -> Bool {
        try await holdRule().holds(texts)
    }

    public func holdRule() async throws -> HoldRule {
        let terms = try await currentTerms()
        return HoldRule { texts in
            guard !terms.isEmpty else { return false }
            let haystack = texts.map(Self.normalize)
            return terms.contains { term in haystack.contains { $0.contains(term) } }
        }
    }

    private func currentTerms() async throws -> [String] {
        if let terms = cache.fresh(maxAge: refreshSeconds) { return terms }
        // Terms stored before the folding changed are folded again here, so they still match.
        let terms = Set(try await load().map(Self.normalize)).filter { !$0.isEmpty }.sorted()
        cache.store(terms)
        return terms
    }
}

final class TermCache: Sendable {
    private let state = Mutex<(terms: [String], loadedAt: Date?)>(([], nil))

    func fresh(maxAge: Double) -> [String]? {
        state.withLock { state in
            guard let loadedAt = state.loadedAt, Date().timeIntervalSince(loadedAt) < maxAge else { return nil }
            return state.terms
        }
    }

    func store(_ terms: [String]) {
        state.withLock { $0 = (terms, Date()) }
    }
}
