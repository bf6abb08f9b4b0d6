import Hashing

/// Opaque keyset cursors (CONTRACT §1): the sort key of the last item of a page, as unpadded base64url of
/// `tag:key:key…` (or `key:key…` without a tag), each key a non-negative decimal. Clients never parse them, and
/// the server accepts only the exact text it could have written: another alphabet, padding, a sign, a leading
/// zero, a missing or extra key or any trailing byte is not a cursor.
public enum Cursor {
    /// The tag of post-like lists (posts, reports, the moderation log): `c1:<id>`, unchanged since the first
    /// release so that cursors already handed out stay valid.
    public static let idTag = "c1"

    /// The cursor after the item with this id (a positive id): base64url of `c1:<id>`.
    public static func encode(_ id: Int) -> String {
        encode(keys: [id], tag: idTag)
    }

    /// The id in exactly `encode(id)` for a positive id; nil for anything else.
    public static func decode(_ text: some StringProtocol) -> Int? {
        guard let keys = decode(text, tag: idTag, count: 1), keys[0] > 0 else { return nil }
        return keys[0]
    }

    /// A cursor of one or more non-negative keys, after `tag:` when there is a tag.
    public static func encode(keys: [Int], tag: String? = nil) -> String {
        var payload = tag.map { $0 + ":" } ?? ""
        payload += keys.map { String($0) }.joined(separator: ":")
        return Base64.encode(Array(payload.utf8), urlSafe: true)
    }

    /// The `count` keys of exactly what `encode(keys:tag:)` writes for non-negative keys; nil for anything else.
    public static func decode(_ text: some StringProtocol, tag: String? = nil, count: Int) -> [Int]? {
        // 20 bytes a key at most ("9223372036854775807:"), as base64: refuse anything longer before decoding it.
        let longest = ((tag?.utf8.count ?? 0) + 1 + 20 * count) * 4 / 3 + 1
        guard count > 0, text.utf8.count <= longest, let bytes = Base64.decode(String(text)) else { return nil }
        var fields = bytes.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        if let tag {
            guard fields.first.map({ $0.elementsEqual(tag.utf8) }) == true else { return nil }
            fields.removeFirst()
        }
        guard fields.count == count else { return nil }
        var keys: [Int] = []
        keys.reserveCapacity(count)
        for field in fields {
            // `0`, or a canonical positive id: no sign, no leading zero, no other byte.
            guard let key = field.elementsEqual([UInt8(ascii: "0")]) ? 0 : CanonicalID.parse(String(decoding: field, as: UTF8.self)) else { return nil }
            keys.append(key)
        }
        // The bytes are canonical; so must their spelling be (the unpadded base64url alphabet, no stray low bits).
        guard encode(keys: keys, tag: tag) == text else { return nil }
        return keys
    }
}
