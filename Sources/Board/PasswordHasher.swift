import Foundation
import Synchronization
import Hashing
import NIOPosix

/// Runs scrypt off Swift's cooperative pool on a small dedicated thread pool. The pool's size bounds both
/// CPU use and memory: each hash needs 128 MiB, so `threads` hashes at once need `threads × 128 MiB`.
/// When more than `maxWaiting` hashes are queued, callers get `rateLimited` at once instead of piling up.
public final class PasswordHasher: Sendable {
    private let pool: NIOThreadPool
    private let parameters: PasswordHash.Parameters
    private let gate: Gate
    /// A hash of a random password, verified for unknown usernames so every failed login costs the same.
    /// Made on first use (on a hashing thread), not at start-up.
    private let dummy: DummyHash

    public init(threads: Int = 2, maxWaiting: Int = 64, parameters: PasswordHash.Parameters = .owasp) {
        self.pool = NIOThreadPool(numberOfThreads: threads)
        self.pool.start()
        self.parameters = parameters
        self.gate = Gate(limit: threads + maxWaiting)
        self.dummy = DummyHash(parameters: parameters)
    }

    /// Throws `PasswordHash.Failure` if this hasher's parameters are outside `PasswordHash.Parameters.Limits`.
    public func hash(_ password: String) async throws -> String {
        let parameters = self.parameters
        return try await run {
            Result { () throws(PasswordHash.Failure) -> String in
                try PasswordHash.create(password: password, parameters: parameters).encoded
            }
        }.get()
    }

    /// Verifies `password` against `encoded`, or against a dummy hash when there is no account. A stored
    /// string that doesn't parse (tampered, truncated, absurd parameters) is `false` after the same dummy
    /// work, never a trap and never a hash at the costs it names.
    public func verify(_ password: String, encoded: String?) async throws -> Bool {
        let dummy = self.dummy
        return try await run {
            guard let encoded, let stored = PasswordHash(encoded: encoded) else {
                _ = dummy.value?.verify(password)
                return false
            }
            return stored.verify(password)
        }
    }

    public func needsRehash(_ encoded: String) -> Bool {
        PasswordHash(encoded: encoded)?.needsRehash(current: parameters) ?? true
    }

    private func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
        guard gate.enter() else { throw BoardError.rateLimited(retryAfterSeconds: 1) }
        defer { gate.leave() }
        return try await pool.runIfActive(work)
    }

    public func shutdown() async {
        try? await pool.shutdownGracefully()
    }
}

/// Counts work admitted to the hasher.
final class Gate: Sendable {
    private let count = Mutex(0)
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    func enter() -> Bool {
        count.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func leave() {
        count.withLock { $0 -= 1 }
    }
}

/// The dummy hash, made once.
final class DummyHash: Sendable {
    private let hash = Mutex<PasswordHash?>(nil)
    private let parameters: PasswordHash.Parameters

    init(parameters: PasswordHash.Parameters) { self.parameters = parameters }

    /// Nil only if the parameters are unsupported, in which case `hash` fails too.
    var value: PasswordHash? {
        hash.withLock { hash in
            if let hash { return hash }
            let made = try? PasswordHash.create(password: Token.generate().value, parameters: parameters)
            hash = made
            return made
        }
    }
}
