/// Where media files live (CONTRACT §7–§8): a directory the server (or nginx) serves, or an S3-compatible bucket.
///
/// Keys are made by ``MediaKey`` and never hold user input; every method refuses a key that is not
/// ``MediaKey/isValid(_:)`` with ``MediaStoreError/Kind/invalidKey`` before any I/O.
public protocol MediaStore: Sendable {
    /// Stores `bytes` under `key`, replacing what was there; readers see the old object or the new one, never a part.
    func put(_ key: String, _ bytes: [UInt8], contentType: String) async throws
    /// The object under `key`; `nil` if there is none.
    func get(_ key: String) async throws -> [UInt8]?
    /// Removes the object under `key`; removing one that is not there is no error.
    func delete(_ key: String) async throws
    /// Moves an object to another key (e.g. between the `public/` and `private/` prefixes when a post is hidden
    /// or restored), replacing what was at `to`. If `from` is gone but `to` exists, the move is already done and
    /// this returns; if neither exists it throws ``MediaStoreError/Kind/notFound``.
    func move(_ from: String, to: String) async throws
    /// The absolute URL under which the object is served: `MEDIA_PUBLIC_BASE_URL` joined with the key.
    func publicURL(for key: String) -> String
}

extension MediaStore {
    /// Joins a base URL and a key with exactly one `/`.
    static func join(_ base: String, _ key: String) -> String {
        var base = Substring(base)
        while base.hasSuffix("/") { base = base.dropLast() }
        var key = Substring(key)
        while key.hasPrefix("/") { key = key.dropFirst() }
        return "\(base)/\(key)"
    }
}
