import Foundation
import Hashing
import NIOCore
import Synchronization

extension FakeAPNs {
    /// The fake's settings and records, shared by its stream handlers (on NIO's event loops) and the test.
    final class Core: Sendable {
        let teamID: String
        let keyID: String
        let publicKey: ES256PublicKey
        let topic: String
        let now: @Sendable () -> Int
        private let state = Mutex(State())

        struct State {
            var requests: [Request] = []
            var connections = 0
            var open: [Int: any Channel] = [:]
            var script: @Sendable (Request) async -> Answer = { _ in .ok }
            var waiters: [Int: Waiter] = [:]
            var nextWaiter = 0
            var deliveredCount = 0
        }

        struct Waiter {
            var count: Int
            var deliveredOnly: Bool
            var continuation: CheckedContinuation<[Request], any Error>
        }

        init(teamID: String, keyID: String, publicKey: ES256PublicKey, topic: String, now: @escaping @Sendable () -> Int) {
            self.teamID = teamID
            self.keyID = keyID
            self.publicKey = publicKey
            self.topic = topic
            self.now = now
        }

        struct Snapshot {
            var requests: [Request]
            var connections: Int
        }

        func snapshot() -> Snapshot { state.withLock { Snapshot(requests: $0.requests, connections: $0.connections) } }

        /// A new TCP connection: its id (1, 2, …), remembered until it closes.
        func connectionAccepted(_ channel: any Channel) -> Int {
            let id = state.withLock { state in
                state.connections += 1
                state.open[state.connections] = channel
                return state.connections
            }
            channel.closeFuture.whenComplete { _ in _ = self.state.withLock { $0.open.removeValue(forKey: id) } }
            return id
        }

        func closeConnections() {
            let open = state.withLock { Array($0.open.values) }
            for channel in open { channel.close(promise: nil) }
        }

        func setScript(_ script: @escaping @Sendable (Request) async -> Answer) { state.withLock { $0.script = script } }

        var script: @Sendable (Request) async -> Answer { state.withLock { $0.script } }

        /// Keeps `request`; returns its index for `answered`.
        func record(_ request: Request) -> Int {
            let (index, ready) = state.withLock { state -> (Int, [(CheckedContinuation<[Request], any Error>, [Request])]) in
                state.requests.append(request)
                return (state.requests.count - 1, Self.readyWaiters(&state))
            }
            for (continuation, requests) in ready { continuation.resume(returning: requests) }
            return index
        }

        /// Notes the status request `index` was answered with (nil: reset or closed).
        func answered(_ index: Int, status: Int?) {
            let ready = state.withLock { state -> [(CheckedContinuation<[Request], any Error>, [Request])] in
                state.requests[index].answeredStatus = status
                if status == 200 { state.deliveredCount += 1 }
                return Self.readyWaiters(&state)
            }
            for (continuation, requests) in ready { continuation.resume(returning: requests) }
        }

        /// Takes out the waiters whose count is reached, with what they get.
        private static func readyWaiters(_ state: inout State) -> [(CheckedContinuation<[Request], any Error>, [Request])] {
            var ready: [(CheckedContinuation<[Request], any Error>, [Request])] = []
            for (id, waiter) in state.waiters {
                if let requests = satisfied(waiter.count, deliveredOnly: waiter.deliveredOnly, state) {
                    state.waiters.removeValue(forKey: id)
                    ready.append((waiter.continuation, requests))
                }
            }
            return ready
        }

        private static func satisfied(_ count: Int, deliveredOnly: Bool, _ state: State) -> [Request]? {
            if deliveredOnly {
                guard state.deliveredCount >= count else { return nil }
                return Array(state.requests.lazy.filter { $0.answeredStatus == 200 }.prefix(count))
            }
            guard state.requests.count >= count else { return nil }
            return Array(state.requests.prefix(count))
        }

        func wait(count: Int, deliveredOnly: Bool, timeout: Duration) async throws -> [Request] {
            let id = state.withLock { state in
                defer { state.nextWaiter += 1 }
                return state.nextWaiter
            }
            // The failsafe: fails the wait if it is still there after `timeout`.
            let failsafe = Task {
                try await Task.sleep(for: timeout)
                let (waiter, had) = self.state.withLock { state in
                    (state.waiters.removeValue(forKey: id), deliveredOnly ? state.deliveredCount : state.requests.count)
                }
                waiter?.continuation.resume(throwing: Timeout(wanted: count, had: had))
            }
            defer { failsafe.cancel() }
            return try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> [Request]? in
                    if let requests = Self.satisfied(count, deliveredOnly: deliveredOnly, state) { return requests }
                    state.waiters[id] = Waiter(count: count, deliveredOnly: deliveredOnly, continuation: continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
