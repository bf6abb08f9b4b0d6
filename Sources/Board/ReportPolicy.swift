/// Rules that decide when reports hide a post.
public struct ReportPolicy: Sendable {
    /// Trusted distinct reporters of open reports that hide a post at once (`REPORT_HIDE_THRESHOLD`).
    public var hideThreshold: Int
    /// Anonymous accounts older than this are trusted reporters (`REPORT_TRUST_AGE_SECONDS`).
    public var trustAgeSeconds: Int

    public init(hideThreshold: Int = 3, trustAgeSeconds: Int = 86_400) {
        self.hideThreshold = hideThreshold
        self.trustAgeSeconds = trustAgeSeconds
    }
}
