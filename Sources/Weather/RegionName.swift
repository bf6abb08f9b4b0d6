import Foundation

/// Normalization of region names for search, identical to `deploy/regions/generate.py`'s `normalize`:
/// canonical decomposition (NFD), combining marks removed, lower-cased, whitespace collapsed, NFC (which
/// recomposes Hangul syllables).
public enum RegionName {
    public static func normalize(_ name: String) -> String {
        let decomposed = name.decomposedStringWithCanonicalMapping
        var stripped = String.UnicodeScalarView()
        for scalar in decomposed.unicodeScalars where scalar.properties.generalCategory != .nonspacingMark {
            stripped.append(scalar)
        }
        let lowered = String(stripped).lowercased()
        var collapsed = ""
        collapsed.reserveCapacity(lowered.utf8.count)
        var pendingSpace = false
        for scalar in lowered.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !collapsed.isEmpty
                continue
            }
            if pendingSpace {
                collapsed.unicodeScalars.append(" ")
                pendingSpace = false
            }
            collapsed.unicodeScalars.append(scalar)
        }
        return collapsed.precomposedStringWithCanonicalMapping
    }

    /// The smallest string greater than every string that starts with `prefix`, in byte (code point) order.
    static func upperBound(forPrefix prefix: String) -> String {
        prefix + "\u{10FFFF}"
    }
}
