/// Where an event sits in the live board's one order (CONTRACT §11, sql/0024): the id of the transaction that wrote it,
/// then its sequence number. A position with `seq` 0 names no event: it is a horizon, "every event below this xid".
/// Written `xid-seq` (the SSE `id:` a client sends back as `Last-Event-ID`).
public struct StreamPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var xid: Int64
    public var seq: Int64

    public init(xid: Int64, seq: Int64) {
        self.xid = xid
        self.seq = seq
    }

    public static let origin = StreamPosition(xid: 0, seq: 0)

    /// Parses exactly what `description` writes: two decimal numbers without signs or leading zeros, joined by `-`.
    public init?(_ text: Substring) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let xid = Self.number(parts[0]), let seq = Self.number(parts[1]) else { return nil }
        self.init(xid: xid, seq: seq)
    }

    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 19, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), text == "0" || text.first != "0" else { return nil }
        return Int64(text)
    }

    public var description: String { "\(xid)-\(seq)" }

    public static func < (a: StreamPosition, b: StreamPosition) -> Bool { (a.xid, a.seq) < (b.xid, b.seq) }
}
