import Foundation

/// Terminal text: display widths (Hangul and other East Asian wide characters take two columns),
/// single-line excerpts, ages and reason summaries.
enum TextLayout {
    /// Columns a string takes in a terminal, roughly (wcwidth-like, per grapheme cluster).
    static func width(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    static func width(of character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        let value = scalar.value
        if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }
        if scalar.properties.generalCategory == .nonspacingMark || scalar.properties.generalCategory == .enclosingMark { return 0 }
        if character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) { return 2 }  // emoji presentation
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
            0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    /// One line: control characters and runs of whitespace become single spaces.
    static func singleLine(_ text: String) -> String {
        var result = ""
        var pendingSpace = false
        for character in text {
            if character.isWhitespace || character.unicodeScalars.allSatisfy({ $0.properties.generalCategory == .control }) {
                pendingSpace = !result.isEmpty
                continue
            }
            if pendingSpace {
                result.append(" ")
                pendingSpace = false
            }
            result.append(character)
        }
        return result
    }

    /// User text made safe to print: control characters (escape sequences included) other than newlines
    /// become `�`, so a post cannot drive the moderator's terminal.
    static func safe(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            scalar == "\n" || scalar.properties.generalCategory != .control ? scalar : "\u{FFFD}"
        }))
    }

    /// Cuts `text` to at most `columns` display columns, ending with `…` when cut.
    static func truncate(_ text: String, columns: Int) -> String {
        guard width(text) > columns else { return text }
        guard columns > 1 else { return columns == 1 ? "…" : "" }
        var result = ""
        var used = 0
        for character in text {
            let w = width(of: character)
            if used + w > columns - 1 { break }
            result.append(character)
            used += w
        }
        return result + "…"
    }

    /// Pads with spaces to `columns` display columns.
    static func pad(_ text: String, columns: Int, alignRight: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, columns - width(text)))
        return alignRight ? padding + text : text + padding
    }

    /// `title — body` on one line, cut to `columns`.
    static func excerpt(title: String?, body: String, columns: Int) -> String {
        let text = [title, body].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " — ")
        return truncate(singleLine(text), columns: columns)
    }

    /// `45s`, `12m`, `3h`, `5d`, `8w`.
    static func age(since date: Date, now: Date = Date()) -> String {
        let seconds = max(0, Int(now.timeIntervalSince(date)))
        switch seconds {
        case ..<60: return "\(seconds)s"
        case ..<3600: return "\(seconds / 60)m"
        case ..<86400: return "\(seconds / 3600)h"
        case ..<(86400 * 14): return "\(seconds / 86400)d"
        default: return "\(seconds / (86400 * 7))w"
        }
    }

    /// `spam×2, abuse`: most frequent first, ties in order of first appearance.
    static func reasons(_ reasons: [String]) -> String {
        var counts: [String: Int] = [:]
        var order: [String] = []
        for reason in reasons {
            if counts[reason] == nil { order.append(reason) }
            counts[reason, default: 0] += 1
        }
        return order.enumerated()
            .sorted { (counts[$0.element]!, -$0.offset) > (counts[$1.element]!, -$1.offset) }
            .map { counts[$0.element]! > 1 ? "\($0.element)×\(counts[$0.element]!)" : $0.element }
            .joined(separator: ", ")
    }

    /// `2026-11-22 09:30Z`.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// `1 report`, `3 reports`; `2 replies` with its `plural`.
    static func count(_ n: Int, _ noun: String, plural: String? = nil) -> String {
        "\(n) \(n == 1 ? noun : plural ?? noun + "s")"
    }

    /// A byte count for people: `812 B`, `95.2 KiB`, `1.4 MiB`.
    static func bytes(_ count: Int) -> String {
        if count < 1024 { return "\(count) B" }
        if count < 1024 * 1024 { return String(format: "%.1f KiB", Double(count) / 1024) }
        return String(format: "%.1f MiB", Double(count) / (1024 * 1024))
    }
}
