import Synchronization

/// Uploads being received at once, counted per account and per client address in this process: each one holds
/// a socket, a temporary file of up to `MEDIA_MAX_BYTES` and up to `MEDIA_UPLOAD_TIMEOUT_SECONDS`. Past either
/// bound the upload is refused before its body is read (429 `rate_limited`, `Retry-After: retryAfterSeconds`).
/// Taking a slot and counting it is one step under one lock, so however many uploads arrive at once, no more than
/// the bound get through.
final class UploadSlots: Sendable {
    /// Uploads in flight for one account (a phone sends its photos one or two at a time).
    static let perAccount = 2
    /// Uploads in flight from one client address (an IPv4 address or an IPv6 /64), whatever the accounts: anonymous
    /// accounts are cheap, so the address bounds what one client can hold open.
    static let perClientAddress = 8
    /// What a refused upload is told to wait: an upload in flight ends within seconds, or at the upload timeout.
    static let retryAfterSeconds = 2

    private let counts = Mutex<[String: Int]>([:])

    /// Runs `body` holding a slot for `accountID` from `clientAddress`; 429 `rate_limited` when either is at its bound.
    func withSlot<T>(accountID: Int, clientAddress: String, _ body: () async throws -> T) async throws -> T {
        let keys = ["account:\(accountID)", "address:\(clientAddress)"]
        let taken = counts.withLock { counts -> Bool in
            guard counts[keys[0], default: 0] < Self.perAccount, counts[keys[1], default: 0] < Self.perClientAddress else { return false }
            for key in keys { counts[key, default: 0] += 1 }
            return true
        }
        guard taken else {
            throw APIError(
                .tooManyRequests, "rate_limited",
                "at most \(Self.perAccount) uploads per account and \(Self.perClientAddress) per client are received at once; try again in \(Self.retryAfterSeconds) s",
                retryAfter: Self.retryAfterSeconds
            )
        }
        defer { release(keys) }
        return try await body()
    }

    private func release(_ keys: [String]) {
        counts.withLock { counts in
            for key in keys {
                let left = counts[key, default: 1] - 1
                counts[key] = left > 0 ? left : nil  // no entry per idle client: the table holds only uploads in flight
            }
        }
    }
}
