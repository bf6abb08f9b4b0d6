/// What the server reads from its environment for media storage (CONTRACT §7): `MEDIA_STORAGE` (`local` default,
/// or `s3`), `MEDIA_DIR`, `MEDIA_PUBLIC_BASE_URL`, and for `s3`: `S3_ENDPOINT`, `S3_BUCKET`, `S3_REGION`,
/// `S3_ACCESS_KEY_ID`, `S3_SECRET_ACCESS_KEY`.
public struct MediaStorageConfiguration: Sendable {
    public enum Backend: String, Sendable {
        case local
        case s3
    }

    public struct S3: Sendable {
        public var endpoint: String
        public var bucket: String
        public var region: String
        public var accessKeyID: String
        public var secretAccessKey: String
    }

    /// A missing or malformed variable, named in the message.
    public struct InvalidValue: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public var backend: Backend
    public var directory: String
    public var publicBaseURL: String
    public var s3: S3?

    /// - Parameters:
    ///   - defaultDirectory: `MEDIA_DIR` when unset (the development commands use a project-local folder).
    ///   - defaultPublicBaseURL: `MEDIA_PUBLIC_BASE_URL` when unset (the server's own `/media/`); required for `s3`.
    public init(environment: [String: String], defaultDirectory: String, defaultPublicBaseURL: String) throws {
        func value(_ name: String) -> String? {
            guard let raw = environment[name], !raw.isEmpty else { return nil }
            return raw
        }
        func required(_ name: String) throws -> String {
            guard let v = value(name) else { throw InvalidValue(description: "\(name) is required with MEDIA_STORAGE=s3") }
            return v
        }
        let rawBackend = value("MEDIA_STORAGE") ?? "local"
        guard let backend = Backend(rawValue: rawBackend) else {
            throw InvalidValue(description: "MEDIA_STORAGE must be local or s3, got '\(rawBackend)'")
        }
        self.backend = backend
        self.directory = value("MEDIA_DIR") ?? defaultDirectory
        let base = value("MEDIA_PUBLIC_BASE_URL")
        for url in [base, value("S3_ENDPOINT")].compactMap({ $0 }) {
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw InvalidValue(description: "MEDIA_PUBLIC_BASE_URL and S3_ENDPOINT must be absolute http(s) URLs, got '\(url)'")
            }
        }
        switch backend {
        case .local:
            self.publicBaseURL = base ?? defaultPublicBaseURL
            self.s3 = nil
        case .s3:
            guard let base else { throw InvalidValue(description: "MEDIA_PUBLIC_BASE_URL is required with MEDIA_STORAGE=s3") }
            self.publicBaseURL = base
            self.s3 = S3(
                endpoint: try required("S3_ENDPOINT"),
                bucket: try required("S3_BUCKET"),
                region: value("S3_REGION") ?? "us-east-1",
                accessKeyID: try required("S3_ACCESS_KEY_ID"),
                secretAccessKey: try required("S3_SECRET_ACCESS_KEY")
            )
        }
    }

    /// `local` in `directory`, with URLs from the server's own `/media/`.
    public static func local(directory: String) -> MediaStorageConfiguration {
        MediaStorageConfiguration(backend: .local, directory: directory, publicBaseURL: "", s3: nil)
    }

    init(backend: Backend, directory: String, publicBaseURL: String, s3: S3?) {
        self.backend = backend
        self.directory = directory
        self.publicBaseURL = publicBaseURL
        self.s3 = s3
    }

    /// The configured store, doing its I/O on `io`'s threads. With `local`, keys under `servedPrefix` are
    /// readable by a web server serving the directory, the rest by the service alone (``LocalMediaStore``).
    public func makeStore(io: MediaIO, servedPrefix: String? = nil) -> any MediaStore {
        guard backend == .s3, let s3 else {
            return LocalMediaStore(directory: directory, publicBaseURL: publicBaseURL, servedPrefix: servedPrefix, threadPool: io.threadPool)
        }
        return S3MediaStore(
            endpoint: s3.endpoint,
            bucket: s3.bucket,
            region: s3.region,
            accessKeyID: s3.accessKeyID,
            secretAccessKey: s3.secretAccessKey,
            publicBaseURL: publicBaseURL,
            httpClient: io.httpClient
        )
    }
}
