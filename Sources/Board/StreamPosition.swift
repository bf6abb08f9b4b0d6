/// Where an event sits in the live board's one order (CONTRACT §11, sql/0024): its id, given in commit order, so once
/// an id is seen no smaller one can appear. Written as the decimal id (the SSE `id:` a client sends back as
/// `Last-Event-ID`); a stream that starts with no event yet names the last id committed before it.
public struct StreamPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var id: Int64

    public init(_ id: Int64) {
        self.id = id
    }

    /// Parses exactly what `description` writes: a decimal number without sign or leading zeros.
    public init?(_ text: Substring) {
        guard !text.isEmpty, text.count <= 19, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), text == "0" || text.first != "0",
            let id = Int64(text)
        else { return nil }
        self.id = id
    }

    public var description: String { String(id) }

    public static func < (a: StreamPosition, b: StreamPosition) -> Bool { a.id < b.id }
}
