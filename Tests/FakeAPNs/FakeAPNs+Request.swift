extension FakeAPNs {
    /// One request as the fake received it, and what it answered.
    public struct Request: Sendable {
        /// The last path segment after `/3/device/` (whatever was sent, checked or not).
        public var deviceToken: String
        public var method: String
        public var path: String
        /// Every header but the pseudo-headers, names lower-cased, in the order sent.
        public var headers: [(String, String)]
        public var apnsID: String?
        public var collapseID: String?
        public var priority: String?
        public var expiration: String?
        public var topic: String?
        public var pushType: String?
        /// The provider token after `bearer `.
        public var jwt: String?
        /// The body (at most `FakeAPNs.maxKeptBodyBytes` of it).
        public var payload: [UInt8]
        /// Which TCP connection carried it: 1 for the first accepted, then 2, …
        public var connectionID: Int
        /// When it arrived: milliseconds since 1970.
        public var receivedAtMilliseconds: Int64
        /// The status answered, once answered; nil before, and for a reset stream or a closed connection.
        public var answeredStatus: Int?

        public func header(_ name: String) -> String? {
            let lower = name.lowercased()
            return headers.first { $0.0 == lower }?.1
        }
    }
}
