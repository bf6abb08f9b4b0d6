import NIOCore

/// What every connection is held to while the server reads a request (`ConnectionGuard`), nginx's defaults unless
/// configured. None of them bounds an answer: a live stream's response lasts as long as its client reads it.
struct ConnectionDeadlines: Sendable {
    /// From the connection's opening, or from the first byte of a request on a kept-alive connection, to the end of
    /// the request head (`HEADER_TIMEOUT_SECONDS`).
    var header: TimeAmount = .seconds(60)
    /// The longest wait on the client between two reads of a body (`BODY_TIMEOUT_SECONDS`). Time the server itself
    /// does not read (its handler busy, the body buffered and waiting) does not count.
    var bodyGap: TimeAmount = .seconds(60)
    /// A whole body but an upload's, from the end of its head (`REQUEST_BODY_DEADLINE_SECONDS`).
    var bodyDeadline: TimeAmount = .seconds(30)
    /// Between an answer and the first byte of the next request (`KEEPALIVE_TIMEOUT_SECONDS`).
    var keepAlive: TimeAmount = .seconds(75)
    /// The longest request target (path and query) answered; a longer one is 414 (nginx's 8 KiB line buffers).
    var maxTargetBytes = Self.maxTargetBytes
    static let maxTargetBytes = 8 * 1024
    /// After an answer given in the middle of a request (or a `Connection: close`), how long what the client still
    /// sends is read and discarded so that it can read the answer (nginx's `lingering_time`)…
    var lingerTime: TimeAmount = .seconds(10)
    /// …and how long a silent client is waited for meanwhile (`lingering_timeout`).
    var lingerGap: TimeAmount = .seconds(5)

    init() {}

    init(_ configuration: AppConfiguration) {
        header = .seconds(Int64(configuration.headerTimeoutSeconds))
        bodyGap = .seconds(Int64(configuration.bodyTimeoutSeconds))
        bodyDeadline = .seconds(Int64(configuration.requestBodyDeadlineSeconds))
        keepAlive = .seconds(Int64(configuration.idleTimeoutSeconds))
    }
}
