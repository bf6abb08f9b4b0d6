import RateLimit

extension RateLimitPolicy {
    /// Anonymous accounts per client address: 30 an hour (carrier NAT puts many phones behind one address).
    public static let accountCreation = RateLimitPolicy(name: "account-create", limit: 30, windowSeconds: 3600)
    /// Failed logins per username: 10 per 15 minutes. Every attempt is counted before the password is
    /// checked; a login that succeeds, or that could not be checked (the database failed), gives its hit back.
    public static let failedLoginPerUsername = RateLimitPolicy(name: "login-fail-user", limit: 10, windowSeconds: 900)
    /// Failed logins per client address: 50 per 15 minutes.
    public static let failedLoginPerIP = RateLimitPolicy(name: "login-fail-ip", limit: 50, windowSeconds: 900)
    /// Registration tries that reach the password hash, per account: 5 an hour. A try is counted before the hash, so
    /// parallel tries with fresh usernames cannot keep the hashing threads busy for everyone else.
    public static let registrationAttempts = RateLimitPolicy(name: "register", limit: 5, windowSeconds: 3600)
    /// Posts by an anonymous account: 3 per 10 minutes (Lemmy allows 6 per 10 minutes for everyone;
    /// Discourse holds new users to fewer).
    public static let anonymousPosting = RateLimitPolicy(name: "post-anon", limit: 3, windowSeconds: 600)
    /// Posts by a registered account: 10 per 10 minutes.
    public static let registeredPosting = RateLimitPolicy(name: "post", limit: 10, windowSeconds: 600)
    /// New reports by one account: 20 an hour (repeating a report is not counted).
    /// CONTRACT §13: anonymous 10, registered 60 replies in any 10 minutes.
    public static let anonymousReplying = RateLimitPolicy(name: "reply-anon", limit: 10, windowSeconds: 600)
    public static let registeredReplying = RateLimitPolicy(name: "reply", limit: 60, windowSeconds: 600)
    public static let reporting = RateLimitPolicy(name: "report", limit: 20, windowSeconds: 3600)
    /// Image uploads by an anonymous / registered account: 10 / 50 an hour.
    public static let anonymousUploads = RateLimitPolicy(name: "upload-anon", limit: 10, windowSeconds: 3600)
    public static let registeredUploads = RateLimitPolicy(name: "upload", limit: 50, windowSeconds: 3600)
    /// New helpful marks by an anonymous / registered account: 60 / 300 an hour (a repeat mark is not counted).
    public static let anonymousMarks = RateLimitPolicy(name: "helpful-anon", limit: 60, windowSeconds: 3600)
    public static let registeredMarks = RateLimitPolicy(name: "helpful", limit: 300, windowSeconds: 3600)
}
