/// A plain-text table with a header row; columns sized by display width, the last column left ragged.
struct TableRenderer {
    struct Column {
        var title: String
        var alignRight = false
    }

    var columns: [Column]
    var rows: [[String]] = []

    init(_ columns: [Column]) {
        self.columns = columns
    }

    mutating func add(_ row: [String]) {
        rows.append(row)
    }

    func render() -> String {
        var widths = columns.map { TextLayout.width($0.title) }
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], TextLayout.width(cell))
            }
        }
        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for (index, column) in columns.enumerated() {
                let cell = index < cells.count ? cells[index] : ""
                let isLast = index == columns.count - 1
                parts.append(isLast && !column.alignRight ? cell : TextLayout.pad(cell, columns: widths[index], alignRight: column.alignRight))
            }
            var text = parts.joined(separator: "  ")
            while text.last == " " { text.removeLast() }
            return text
        }
        return ([line(columns.map(\.title))] + rows.map(line)).joined(separator: "\n")
    }
}
