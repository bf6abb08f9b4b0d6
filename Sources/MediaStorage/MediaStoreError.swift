/// A failure of a ``MediaStore``.
public struct MediaStoreError: Error, Sendable, CustomStringConvertible {
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The key is not ``MediaKey/isValid(_:)``; nothing was read or written.
        public static let invalidKey = Kind("invalidKey")
        /// `move` found neither its source nor its destination.
        public static let notFound = Kind("notFound")
        /// A local file operation failed (`errno` in ``MediaStoreError/code``).
        public static let fileSystem = Kind("fileSystem")
        /// The object store could not be reached or did not answer in time (curl's error in the message).
        public static let transport = Kind("transport")
        /// The object store answered with an error status (``MediaStoreError/status``, S3's ``MediaStoreError/code``).
        public static let server = Kind("server")
    }

    public let kind: Kind
    /// The key the operation was about.
    public let key: String
    /// The HTTP status, for ``Kind/server``.
    public let status: Int?
    /// S3's error code from the XML body (`NoSuchBucket`, `AccessDenied`, `SignatureDoesNotMatch`…), or the
    /// `errno` name for ``Kind/fileSystem``.
    public let code: String?
    public let message: String

    public init(_ kind: Kind, key: String, status: Int? = nil, code: String? = nil, message: String) {
        self.kind = kind
        self.key = key
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String {
        var text = "media store \(kind) for '\(key)'"
        if let status { text += ", status \(status)" }
        if let code { text += " \(code)" }
        return text + ": \(message)"
    }
}
