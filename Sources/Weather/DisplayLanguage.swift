/// The languages display names and descriptions come in (CONTRACT §1): Korean by default, or English.
public enum DisplayLanguage: String, Codable, Sendable, CaseIterable {
    case ko, en

    /// Picks from an `Accept-Language` header: the highest-weighted of `ko`/`en` (any region subtag);
    /// Korean when the header is missing or names neither.
    public init(acceptLanguage header: String?) {
        self = .ko
        guard let header, !header.isEmpty else { return }
        var best: (language: DisplayLanguage, weight: Double)?
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = pieces.first?.lowercased(), !tag.isEmpty else { continue }
            var weight = 1.0
            for parameter in pieces.dropFirst() where parameter.lowercased().hasPrefix("q=") {
                weight = Double(parameter.dropFirst(2)) ?? 0
            }
            let primary = tag.split(separator: "-").first.map(String.init) ?? tag
            guard weight > 0, let language = DisplayLanguage(rawValue: primary) else { continue }
            if best == nil || weight > best!.weight { best = (language, weight) }
        }
        if let best { self = best.language }
    }
}

import Foundation
