extension FakeAPNs {
    /// What the fake does with a request that passed Apple's checks, as a test's script decides.
    public indirect enum Answer: Sendable, Equatable {
        /// 200, with the request's `apns-id`.
        case ok
        /// `status` with the JSON body `{"reason": reason, "timestamp": timestamp}` (no `timestamp` when nil).
        case status(Int, reason: String, timestamp: Int64? = nil)
        /// RST_STREAM (INTERNAL_ERROR) on the request's stream; the connection stays.
        case resetStream
        /// The TCP connection closes under every stream on it.
        case closeConnection
        /// The answer after `Duration` (a slow server).
        case delayed(Duration, Answer)
    }
}
