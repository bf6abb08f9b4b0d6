/// One counted hit, which `RateLimiter.giveBack` can return (a login that succeeded, work that did not
/// happen). A permit from a disabled limiter counts nothing.
public struct RateLimitPermit: Sendable, Equatable {
    let bucket: String?
    /// The hit's time in microseconds since 1970, as stored in the bucket.
    let microseconds: Int64
    /// How many hits it counted at that time.
    var hits: Int = 1

    static let uncounted = RateLimitPermit(bucket: nil, microseconds: 0)
}
