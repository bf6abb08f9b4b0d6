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
    /// `CurlMultiplexer` only: past `maxResponseBytes` keep the first bytes and drop the rest, instead of failing the
    /// transfer (an answer whose status counts more than its body).
    public var truncatesResponseBody: Bool = false

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

    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    /// A failure of the way there, not of the request: worth trying again later. A reset stream (`CURLE_HTTP2_STREAM`
    /// 92), an HTTP/2 framing error (`CURLE_HTTP2` 16), a lost or refused connection (`CURLE_COULDNT_CONNECT` 7,
    /// `CURLE_SEND_ERROR` 55, `CURLE_RECV_ERROR` 56, `CURLE_GOT_NOTHING` 52, `CURLE_PARTIAL_FILE` 18), a name that did
    /// not resolve (6), a timeout (28), and TLS failures (`CURLE_SSL_CONNECT_ERROR` 35, `CURLE_PEER_FAILED_VERIFICATION`
    /// 60): a server whose certificate is not trusted may be a broken middlebox or a configuration being fixed.
    public var isTransient: Bool { Self.transientCodes.contains(code) }

    /// The TLS handshake failed or the server's certificate was not trusted (35, 58, 60, 77, 83, 90, 91).
    public var isTLS: Bool { [35, 58, 60, 77, 83, 90, 91].contains(code) }

    static let transientCodes: Set<Int> = [6, 7, 16, 18, 28, 35, 52, 55, 56, 60, 92]
}
