/// Signs a request with libcurl's own AWS Signature Version 4 (`CURLOPT_AWS_SIGV4`).
///
/// libcurl 7.88 signs the method, path, query, `Host`, `X-Amz-Date` and every header the request sets
/// itself, and hashes the body it sends; it does not add `x-amz-content-sha256`, which S3 requires:
/// set that header on the request (SHA-256 of the body, hex; of the empty string without one).
public struct AWSSigV4: Sendable {
    /// `aws:amz:REGION:SERVICE`, as `CURLOPT_AWS_SIGV4` takes it.
    public var provider: String
    public var accessKeyID: String
    public var secretAccessKey: String

    public init(region: String, service: String, accessKeyID: String, secretAccessKey: String) {
        self.provider = "aws:amz:\(region):\(service)"
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
    }
}
