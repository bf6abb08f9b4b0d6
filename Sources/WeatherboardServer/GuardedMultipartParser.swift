import MultipartKit
import NIOCore

/// multipart-kit's `MultipartParser` behind a guard for its one trap: in 4.7.1 it looks a header name's bytes up
/// in a 128-entry table, so a part header whose name holds a byte of 0x80 or more (`X\u{FF}: y`) indexes past
/// it and kills the process. A shadow parser reads every chunk first, with each such byte turned into 0x01: a
/// byte that matches no boundary, CR, LF or colon (so the shadow walks the same states as the real parser), and
/// that no header name may hold (so where the real parser would trap, the shadow throws its syntax error). Only
/// a chunk the shadow took reaches the real parser, whose callbacks see the bytes as sent.
final class GuardedMultipartParser {
    private let parser: MultipartParser
    private let shadow: MultipartParser

    init(boundary: String) {
        parser = MultipartParser(boundary: boundary)
        shadow = MultipartParser(boundary: boundary)
    }

    var onHeader: (String, String) -> Void {
        get { parser.onHeader }
        set { parser.onHeader = newValue }
    }

    var onBody: (inout ByteBuffer) -> Void {
        get { parser.onBody }
        set { parser.onBody = newValue }
    }

    var onPartComplete: () -> Void {
        get { parser.onPartComplete }
        set { parser.onPartComplete = newValue }
    }

    /// Parses the next chunk; throws (and the request is malformed) where the real parser would fail or trap.
    func execute(_ chunk: ByteBuffer) throws {
        try shadow.execute(Self.masked(chunk))
        try parser.execute(chunk)
    }

    /// The chunk with every byte of 0x80 or more replaced by 0x01.
    static func masked(_ chunk: ByteBuffer) -> ByteBuffer {
        var copy = ByteBuffer()
        copy.writeImmutableBuffer(chunk)  // one copy (the chunk's storage is shared, so it is not written)
        copy.withUnsafeMutableReadableBytes { bytes in
            for i in bytes.indices where bytes[i] >= 0x80 { bytes[i] = 0x01 }
        }
        return copy
    }
}
