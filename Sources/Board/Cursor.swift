import Foundation
import Hashing

/// Opaque keyset cursors: the last item's sort key, base64url-encoded with a version tag.
/// Clients never parse them; anything but a cursor this server could have written is a 400.
public enum Cursor {
    public static func encode(_ id: Int) -> String {
        Base64.encode(Array("c1:\(id)".utf8), urlSafe: true)
    }

    /// The id in a cursor this server issued: exactly `encode(id)` for a positive id (so no padding, other
    /// alphabet, sign, leading zero or trailing byte); anything else throws.
    public static func decode(_ text: String) throws -> Int {
        // Only the exact string `encode` writes is a cursor: the key must be a canonical id
        // (`c1:05`, `c1:+5`, `c1:-5` are forged), and the text must be its unpadded base64url spelling.
        guard text.utf8.count <= 32, let bytes = Base64.decode(text),
            let string = String(bytes: bytes, encoding: .utf8), string.hasPrefix("c1:"),
            let id = CanonicalID.parse(string.dropFirst(3)), encode(id) == text
        else {
            throw BoardError.badRequest("cursor is not valid; use nextCursor from a previous page")
        }
        return id
    }
}
