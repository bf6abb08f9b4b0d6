/// An outbound HTTP request.
public struct CurlRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: [UInt8]?
    /// Connection timeout in milliseconds.
    public var connectTimeoutMilliseconds: Int
    /// Whole-transfer timeout in milliseconds.
    public var timeoutMilliseconds: Int
    /// Sign with AWS Signature Version 4 (libcurl's `CURLOPT_AWS_SIGV4`); `nil`: unsigned.
    public var awsSigV4: AWSSigV4?
    /// The most body bytes (after decompression) accepted: past it the transfer is abandoned and `send` throws
    /// `CurlError.tooLarge`, so a hostile or broken server cannot fill memory. 64 MiB unless set.
    public var maxResponseBytes: Int

    public init(
        method: String = "GET",
        url: String,
        headers: [(String, String)] = [],
        body: [UInt8]? = nil,
        connectTimeoutMilliseconds: Int = 2000,
        timeoutMilliseconds: Int = 5000,
        awsSigV4: AWSSigV4? = nil,
        maxResponseBytes: Int = 64 << 20
    ) {
        self.maxResponseBytes = maxResponseBytes
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.timeoutMilliseconds = timeoutMilliseconds
        self.awsSigV4 = awsSigV4
    }
}

/// A received response. Header names are lower-cased.
public struct CurlResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.0 == lower }?.1
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
}

public struct CurlError: Error, CustomStringConvertible, Sendable {
    public var code: Int
    public var message: String
    public var description: String { "curl error \(code): \(message)" }
    public var isTimeout: Bool { code == 28 }
    /// The answer was larger than the request's `maxResponseBytes` (or its headers than `CurlHTTPClient.maxHeaderBytes`).
    public var isTooLarge: Bool { code == Self.tooLargeCode }
    /// curl's `CURLE_FILESIZE_EXCEEDED`, also used when the write callback stops a transfer for its size.
    public static let tooLargeCode = 63
}
