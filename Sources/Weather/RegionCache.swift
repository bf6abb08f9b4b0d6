import Foundation
import Synchronization

/// A small in-process cache for region lookups and searches. The catalog changes only when
/// `weatherboard migrate` loads a new one, so entries live for `ttl` (a newly loaded catalog shows up within
/// that time without a restart). Bounded: when full, it starts over.
final class RegionCache<Value: Sendable>: Sendable {
    private struct Entry {
        var value: Value
        var expires: ContinuousClock.Instant
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let capacity: Int
    private let ttl: Duration

    init(capacity: Int, ttl: Duration = .seconds(300)) {
        self.capacity = capacity
        self.ttl = ttl
    }

    func value(for key: String) -> Value? {
        let now = ContinuousClock.now
        return entries.withLock { entries in
            guard let entry = entries[key], entry.expires > now else { return nil }
            return entry.value
        }
    }

    func store(_ value: Value, for key: String) {
        let expires = ContinuousClock.now + ttl
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = Entry(value: value, expires: expires)
        }
    }
}
