import Foundation
import Hashing

/// Opaque keyset cursors: the last item's sort key, base64url-encoded with a version tag.
/// Clients never parse them; anything that doesn't decode is a 400.
public enum Cursor {
    public static func encode(_ id: Int) -> String {
        Base64.encode(Array("c1:\(id)".utf8), urlSafe: true)
    }

    public static func decode(_ text: String) throws -> Int {
        guard let bytes = Base64.decode(text),
            let string = String(bytes: bytes, encoding: .utf8), string.hasPrefix("c1:"),
            let id = Int(string.dropFirst(3)), id > 0
        else {
            throw BoardError.badRequest("cursor is not valid; use nextCursor from a previous page")
        }
        return id
    }
}
