import Foundation

/// What a search looks for (CONTRACT §10): the whitespace-separated terms of `q`, each folded as the term filter
/// folds (`TermFilter.normalize`: NFKC, case folding, default-ignorables removed), every one of which a post's title,
/// body or image alt text must contain as a substring of its own folded text.
///
/// - `q` is folded whole, then split on whitespace, so a term never holds a space or a line break (folding turns a
///   no-break or ideographic space into a space first); repeated terms count once.
/// - 1–100 code points after folding (and trimming); nothing left, or more, is 422 `invalid_field` naming `q`.
/// - Substrings are of code points (`String.unicodeScalars`), as PostgreSQL's `strpos` compares them; a document
///   holds one field a line (`document(title:body:)`, the alt texts' own lines), and no term spans two.
/// - `keys` are what the index (sql/0023's `search_keys`) holds for every document containing the terms: a
///   one-character term's code point, a longer term's adjacent pairs. They narrow a search to candidates, which the
///   terms themselves then check exactly.
public struct SearchTerms: Sendable, Equatable {
    public let terms: [String]

    public static let maximumLength = 100

    public init(parsing raw: String) throws {
        let folded = Self.fold(raw).trimmingCharacters(in: .whitespacesAndNewlines)
        let length = folded.unicodeScalars.count
        guard length >= 1 else {
            throw BoardError.invalidField(field: "q", message: "must hold a character to search for (it is empty once folded)")
        }
        guard length <= Self.maximumLength else {
            throw BoardError.invalidField(field: "q", message: "must be at most \(Self.maximumLength) characters (got \(length))")
        }
        var seen = Set<String>()
        terms = folded.split(whereSeparator: \.isWhitespace)
            .map(String.init)
            .filter { seen.insert($0).inserted }
    }

    /// The folding of both sides: the term filter's (CONTRACT §5).
    public static func fold(_ text: String) -> String {
        TermFilter.normalize(text)
    }

    /// A post's own searchable text: its title and body, folded, one line each (`post_search.text_doc`).
    public static func document(title: String?, body: String) -> String {
        fold(title ?? "") + "\n" + fold(body)
    }

    /// The index keys every matching document holds (sql/0023's `search_keys`), sorted and without repeats.
    public var keys: [Int] {
        var keys = Set<Int>()
        for term in terms {
            let scalars = term.unicodeScalars.map { Int($0.value) }
            if scalars.count == 1 {
                keys.insert(scalars[0])
            } else {
                for index in scalars.indices.dropLast() { keys.insert(scalars[index] << 21 | scalars[index + 1]) }
            }
        }
        return keys.sorted()
    }

    /// Whether a folded document (lines of folded text) holds every term: the rule the index's candidates are held to,
    /// stated plainly (the tests compare searches against it).
    public func matches(folded lines: [String]) -> Bool {
        terms.allSatisfy { term in
            let needle = Array(term.unicodeScalars)
            return lines.contains { Self.contains(Array($0.unicodeScalars), needle) }
        }
    }

    static func contains(_ haystack: [Unicode.Scalar], _ needle: [Unicode.Scalar]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in haystack[start..<(start + needle.count)].elementsEqual(needle) }
    }
}
