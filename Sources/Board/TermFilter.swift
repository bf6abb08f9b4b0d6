import Foundation

/// The blocked-term filter: case-insensitive substring matching on NFC-normalized text, so Hangul written
/// with conjoining jamo matches its precomposed form. Terms are cached for a few seconds, so a term added
/// by an operator applies to every server instance almost at once without a query per post.
public final class TermFilter: ContentFilter {
    private let load: @Sendable () async throws -> [String]
    private let cache: TermCache
    private let refreshSeconds: Double

    public init(refreshSeconds: Double = 5, load: @escaping @Sendable () async throws -> [String]) {
        self.load = load
        self.refreshSeconds = refreshSeconds
        self.cache = TermCache()
    }

    public static func normalize(_ text: String) -> String {
        TextRules.normalize(text).lowercased().precomposedStringWithCanonicalMapping
    }

    public func shouldHold(_ texts: [String]) async throws -> Bool {
        let terms = try await currentTerms()
        guard !terms.isEmpty else { return false }
        let haystack = texts.map(Self.normalize)
        return terms.contains { term in haystack.contains { $0.contains(term) } }
    }

    private func currentTerms() async throws -> [String] {
        if let terms = cache.fresh(maxAge: refreshSeconds) { return terms }
        let terms = try await load()
        cache.store(terms)
        return terms
    }
}

final class TermCache: @unchecked Sendable {
    // Safety: fields are only touched while `lock` is held.
    private let lock = NSLock()
    private var terms: [String] = []
    private var loadedAt: Date?

    func fresh(maxAge: Double) -> [String]? {
        lock.withLock {
            guard let loadedAt, Date().timeIntervalSince(loadedAt) < maxAge else { return nil }
            return terms
        }
    }

    func store(_ terms: [String]) {
        lock.withLock {
            self.terms = terms
            self.loadedAt = Date()
        }
    }
}
