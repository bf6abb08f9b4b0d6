import Foundation

/// The languages display names and descriptions come in (CONTRACT §1): Korean by default, or English.
public enum Language: String, Codable, Sendable, CaseIterable {
    case ko, en

    /// Picks from an `Accept-Language` header: the highest-weighted of `ko`/`en` (any region subtag, q-values
    /// honoured, the first of equal weights); Korean when the header is missing or names neither.
    public init(acceptLanguage header: String?) {
        self = .ko
        guard let header, !header.isEmpty else { return }
        var best: (language: Language, weight: Double)?
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let tag = pieces.first, !tag.isEmpty else { continue }
            var weight = 1.0
            for parameter in pieces.dropFirst() where parameter.hasPrefix("q=") {
                weight = Double(parameter.dropFirst(2)) ?? 0
            }
            let primary = tag.split(separator: "-").first.map(String.init) ?? tag
            guard weight > 0, let language = Language(rawValue: primary) else { continue }
            if best.map({ weight > $0.weight }) ?? true { best = (language, weight) }
        }
        if let best { self = best.language }
    }

    /// A place's display name: the Korean one when asked for and known, the English one otherwise.
    public func placeName(korean: String?, english: String) -> String {
        self == .ko ? (korean ?? english) : english
    }
}
