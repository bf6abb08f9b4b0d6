import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `login` stores: the server, the bearer token and the username it belongs to.
struct StoredCredentials: Codable, Sendable, Equatable {
    var server: String
    var token: String
    var username: String
}

/// The credentials file: `$XDG_CONFIG_HOME/weatherboard/credentials.json` (default `~/.config`), mode 0600
/// in a 0700 directory. It is written to a temporary file created 0600 and renamed into place, so it is
/// never readable by others, not even for a moment, and never half-written.
struct CredentialsStore: Sendable {
    let fileURL: URL

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let base: URL
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            base = URL(fileURLWithPath: xdg, isDirectory: true)
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            base = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".config", isDirectory: true)
        }
        fileURL = base.appendingPathComponent("weatherboard", isDirectory: true).appendingPathComponent("credentials.json")
    }

    var path: String { fileURL.path }
    private var directory: String { fileURL.deletingLastPathComponent().path }

    /// The stored credentials, or nil when there are none.
    func load() throws -> StoredCredentials? {
        let data: Data
        do {
            data = try Data(contentsOf: fileURL)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        } catch {
            if !FileManager.default.fileExists(atPath: path) { return nil }
            throw AdminError(.server, "cannot read \(path): \(error.localizedDescription)")
        }
        do {
            return try JSONDecoder().decode(StoredCredentials.self, from: data)
        } catch {
            throw AdminError(.notLoggedIn, "\(path) is not a valid credentials file: run weatherboard-admin login --server URL --username NAME")
        }
    }

    func save(_ credentials: StoredCredentials) throws {
        try makeDirectory()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var bytes = [UInt8](try encoder.encode(credentials))
        bytes.append(UInt8(ascii: "\n"))

        let temporary = "\(path).\(getpid()).tmp"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create \(temporary)") }
        var ok = fchmod(fd, 0o600) == 0  // in case of an unusual umask-free filesystem
        ok = ok && bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
        ok = ok && fsync(fd) == 0
        let savedErrno = errno
        close(fd)
        guard ok else {
            unlink(temporary)
            errno = savedErrno
            throw failure("cannot write \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            let error = failure("cannot write \(path)")
            unlink(temporary)
            throw error
        }
    }

    /// Removes the credentials file; true when there was one.
    @discardableResult
    func delete() throws -> Bool {
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw failure("cannot delete \(path)")
    }

    /// Creates the directory 0700 (and any missing parents 0700); tightens an existing one.
    private func makeDirectory() throws {
        var missing: [String] = []
        var current = URL(fileURLWithPath: directory, isDirectory: true)
        while !FileManager.default.fileExists(atPath: current.path), current.path != "/" {
            missing.append(current.path)
            current = current.deletingLastPathComponent()
        }
        for dir in missing.reversed() {
            if mkdir(dir, 0o700) != 0 && errno != EEXIST { throw failure("cannot create \(dir)") }
        }
        // Our own directory only, never a parent such as ~/.config.
        if chmod(directory, 0o700) != 0 { throw failure("cannot set the mode of \(directory)") }
    }

    private func failure(_ what: String) -> AdminError {
        AdminError(.server, "\(what): \(String(cString: strerror(errno)))")
    }
}
