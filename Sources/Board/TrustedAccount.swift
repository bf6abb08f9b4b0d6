import Database

/// Whose reports and helpful marks count (CONTRACT §5): a registered account, or an anonymous one older than the
/// trust age, so a handful of fresh anonymous accounts cannot hide or rank a post on their own.
enum TrustedAccount {
    /// The condition on the `accounts` row `alias`.
    static func condition(_ alias: String, ageSeconds: Int) -> SQLQuery {
        "(\(raw: alias).kind = 'registered' OR \(raw: alias).created_at <= now() - make_interval(secs => \(Double(ageSeconds))))"
    }
}
