import NIOPosix

/// Media as files under a directory, which the server serves under `/media/` (and nginx may serve directly).
///
/// Writes are atomic (a temporary file in the same directory, `fsync`, then `rename`); files are 0644 and
/// directories 0755 whatever the umask, so a web server running as another user can read them. Every file
/// operation blocks a thread of `threadPool` (``MediaIO``'s), never Swift's cooperative pool. (NIOFileSystem was considered:
/// its `replaceItem` removes the old file before moving the new one in, which is not atomic.)
public struct LocalMediaStore: MediaStore {
    public let directory: String
    public let publicBaseURL: String
    /// Keys under this prefix are what a web server reading the directory serves: files 0644 in directories
    /// 0755. Everything else is the service's alone: 0600 in 0700. nil: everything is served.
    public let servedPrefix: String?
    private let threadPool: NIOThreadPool

    /// - Parameters:
    ///   - directory: `MEDIA_DIR`; created (with its parents) on the first write if missing.
    ///   - publicBaseURL: `MEDIA_PUBLIC_BASE_URL`, e.g. `https://example.org/media/`.
    ///   - servedPrefix: see ``servedPrefix``.
    ///   - threadPool: where the blocking file calls run (``MediaIO``'s, never the shared `NIOThreadPool.singleton`).
    public init(directory: String, publicBaseURL: String, servedPrefix: String? = nil, threadPool: NIOThreadPool) {
        var directory = Substring(directory)
        while directory.count > 1, directory.hasSuffix("/") { directory = directory.dropLast() }
        self.directory = String(directory)
        self.publicBaseURL = publicBaseURL
        self.servedPrefix = servedPrefix
        self.threadPool = threadPool
    }

    private func isServed(_ key: String) -> Bool {
        servedPrefix.map { key.hasPrefix($0) } ?? true
    }

    public func put(_ key: String, _ bytes: [UInt8], contentType: String) async throws {
        try MediaKey.validate(key)
        let root = directory
        let shared = isServed(key)
        try await threadPool.runIfActive { try LocalFiles.write(bytes, key: key, root: root, shared: shared) }
    }

    public func get(_ key: String) async throws -> [UInt8]? {
        try MediaKey.validate(key)
        let root = directory
        return try await threadPool.runIfActive { try LocalFiles.read(key: key, root: root) }
    }

    public func delete(_ key: String) async throws {
        try MediaKey.validate(key)
        let root = directory
        try await threadPool.runIfActive { try LocalFiles.remove(key: key, root: root) }
    }

    public func move(_ from: String, to: String) async throws {
        try MediaKey.validate(from)
        try MediaKey.validate(to)
        let root = directory
        let shared = isServed(to)
        try await threadPool.runIfActive { try LocalFiles.move(from, to: to, root: root, shared: shared) }
    }

    public func publicURL(for key: String) -> String {
        Self.join(publicBaseURL, key)
    }
}
