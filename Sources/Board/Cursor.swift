import Foundation
import Hashing

/// Opaque keyset cursors: the last item's sort key, base64url-encoded with a version tag.
/// Clients never parse them; anything that doesn't decode is a 400.
public enum Cursor {
    public static func encode(_ id: Int) -> String {
        Base64.encode(Array("c1:\(id)".utf8), urlSafe: true)
    }

    /// The id in a cursor this server issued: exactly `encode(id)` for a positive id (so no padding, other
    /// alphabet, sign, leading zero or trailing byte); anything else throws.
    public static func decode(_ text: String) throws -> Int {
        guard text.utf8.count <= 32, let bytes = Base64.decode(text),
            let string = String(bytes: bytes, encoding: .utf8), string.hasPrefix("c1:"),
            let id = Int(string.dropFirst(3)), id > 0, encode(id) == text
        else {
            throw BoardError.badRequest("cursor is not valid; use nextCursor from a previous page")
        }
        return id
    }
}
