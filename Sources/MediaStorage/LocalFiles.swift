#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The blocking file operations of ``LocalMediaStore``, for its thread pool only. Keys are validated before
/// they get here, so `root + "/" + key` never leaves `root`.
enum LocalFiles {
    /// Modes of what a web server reading the directory may serve (`shared`), and of everything else, which is
    /// the service's alone. The root itself is always 0755, so the shared side stays reachable.
    static func fileMode(shared: Bool) -> mode_t { shared ? 0o644 : 0o600 }
    static func directoryMode(shared: Bool) -> mode_t { shared ? 0o755 : 0o700 }

    static func write(_ bytes: [UInt8], key: String, root: String, shared: Bool) throws(MediaStoreError) {
        let path = root + "/" + key
        let parent = parentPath(of: path)
        try makeDirectories(parent, key: key, root: root, shared: shared)
        let temporary = parent + "/.tmp-" + MediaKey.random()
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("open", key: key) }
        var written = 0
        var failed: MediaStoreError?
        bytes.withUnsafeBytes { buffer in
            while written < buffer.count {
                let n = systemWrite(fd, buffer.baseAddress.map { $0 + written }, buffer.count - written)
                if n > 0 {
                    written += n
                } else if n < 0, errno == EINTR {
                    continue
                } else {
                    failed = failure("write", key: key)
                    return
                }
            }
        }
        if failed == nil, fchmod(fd, fileMode(shared: shared)) != 0 { failed = failure("fchmod", key: key) }
        if failed == nil, fsync(fd) != 0 { failed = failure("fsync", key: key) }
        if close(fd) != 0, failed == nil { failed = failure("close", key: key) }
        if failed == nil, rename(temporary, path) != 0 { failed = failure("rename", key: key) }
        if let failed {
            unlink(temporary)
            throw failed
        }
    }

    /// The file's bytes; `nil` if there is no regular file under the key.
    static func read(key: String, root: String) throws(MediaStoreError) -> [UInt8]? {
        let fd = open(root + "/" + key, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw failure("open", key: key, errno: code)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("fstat", key: key) }
        guard info.st_mode & S_IFMT == S_IFREG else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(clamping: info.st_size))
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                bytes.append(contentsOf: chunk[0..<n])
            } else if n == 0 {
                return bytes
            } else if errno != EINTR {
                throw failure("read", key: key)
            }
        }
    }

    static func remove(key: String, root: String) throws(MediaStoreError) {
        let path = root + "/" + key
        guard isRegularFile(path) else { return }
        if unlink(path) != 0, errno != ENOENT {
            throw failure("unlink", key: key)
        }
    }

    /// Moves a file, then gives it the mode of its new side.
    static func move(_ from: String, to: String, root: String, shared: Bool) throws(MediaStoreError) {
        let source = root + "/" + from
        let destination = root + "/" + to
        guard isRegularFile(source) else {
            // Gone already: done if the destination is there (a repeated move), else there was nothing to move.
            if isRegularFile(destination) { return }
            throw MediaStoreError(.notFound, key: from, message: "no such object")
        }
        guard source != destination else { return }
        try makeDirectories(parentPath(of: destination), key: to, root: root, shared: shared)
        if rename(source, destination) != 0 {
            let code = errno
            if code == ENOENT, isRegularFile(destination) { return }  // a concurrent move won
            throw failure("rename", key: from, errno: code)
        }
        if chmod(destination, fileMode(shared: shared)) != 0 { throw failure("chmod", key: to) }
    }

    // MARK: Helpers

    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    static func parentPath(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.utf8.startIndex ? "/" : String(path[..<slash])
    }

    /// `mkdir -p`, each directory it creates with its mode whatever the umask: 0755 up to the root, then the
    /// mode of the key's side.
    static func makeDirectories(_ path: String, key: String, root: String, shared: Bool) throws(MediaStoreError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw MediaStoreError(.fileSystem, key: key, code: "ENOTDIR", message: "a file is in the way of a directory")
            }
            return
        }
        let parent = parentPath(of: path)
        if parent != path, parent != "/", parent != "." { try makeDirectories(parent, key: key, root: root, shared: shared) }
        let mode = directoryMode(shared: shared || path.utf8.count <= root.utf8.count)
        if mkdir(path, mode) != 0 {
            guard errno == EEXIST else { throw failure("mkdir", key: key) }
            return  // made by a concurrent writer
        }
        if chmod(path, mode) != 0 { throw failure("chmod", key: key) }
    }

    static func failure(_ operation: String, key: String, errno code: Int32 = errno) -> MediaStoreError {
        MediaStoreError(.fileSystem, key: key, code: "errno \(code)", message: "\(operation): \(String(cString: strerror(code)))")
    }
}

// `read` and `write` are shadowed inside `LocalFiles` by its own methods' names.
@inline(__always)
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}

@inline(__always)
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
