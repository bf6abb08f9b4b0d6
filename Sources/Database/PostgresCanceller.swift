import DequeModule
import Foundation
import Synchronization

/// The pool's cancel thread: it sends the cancel requests of cancelled running jobs (`PQcancel`), so a
/// cancelling task returns at once instead of waiting for the server, on whatever thread it runs.
///
/// libpq 15's `PQcancel` has no timeout: a server that accepts the cancel connection and never answers holds
/// this thread. The wait is bounded where it matters: the worker whose job was cancelled waits at most
/// `PostgresConfiguration.connectTimeoutSeconds` for its request to be delivered before it runs anything
/// else on that connection, and otherwise closes the connection (a cancel that arrives late must not hit the
/// next statement; closing it ends the session and whatever it runs). The queue holds at most one request per
/// worker: a worker settles its request before it takes another job, and withdraws it if it gives up.
final class PostgresCanceller: Sendable {
    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)

    private struct State {
        var requests: Deque<CancelRequest> = []
        var closed = false
        /// A request is being sent (the thread may be blocked in `PQcancel`).
        var sending = false
    }

    /// Queues a request for the cancel thread; once closed, the request fails at once.
    func submit(_ request: CancelRequest) {
        let queued: Bool = state.withLock { state in
            guard !state.closed else { return false }
            state.requests.append(request)
            return true
        }
        if queued { wakeup.signal() } else { request.finish(delivered: false) }
    }

    /// Takes back a request its worker gave up on, if the thread has not started sending it.
    func withdraw(_ request: CancelRequest) {
        state.withLock { state in
            if let index = state.requests.firstIndex(where: { $0 === request }) { state.requests.remove(at: index) }
        }
    }

    /// The cancel thread's loop; returns once closed.
    func run() {
        while true {
            let next: CancelRequest?? = state.withLock { state in
                state.sending = false
                guard !state.closed else { return .some(nil) }
                guard let request = state.requests.popFirst() else { return nil }
                state.sending = true
                return request
            }
            switch next {
            case .none:
                wakeup.wait()
            case .some(.none):
                return
            case .some(.some(let request)):
                if request.start() { request.finish(delivered: request.handle.send()) }
            }
        }
    }

    /// Stops the thread after its current request; queued requests fail. Returns false while a request is
    /// being sent: the thread may be blocked in `PQcancel` for good, so nobody should wait for it to end.
    func close() -> Bool {
        let (failed, sending): ([CancelRequest], Bool) = state.withLock { state in
            state.closed = true
            defer { state.requests.removeAll() }
            return (Array(state.requests), state.sending)
        }
        for request in failed { request.finish(delivered: false) }
        wakeup.signal()
        return !sending
    }
}

/// One cancel request, between the task that cancelled a running job and the worker running it.
final class CancelRequest: Sendable {
    let handle: PostgresCancelHandle
    private let state = Mutex(Phase.queued)
    private let done = DispatchSemaphore(value: 0)

    private enum Phase {
        case queued
        case sending
        case delivered
        case failed
        /// The worker gave up waiting; the outcome no longer matters.
        case abandoned
    }

    init(handle: PostgresCancelHandle) {
        self.handle = handle
    }

    /// The cancel thread is about to send it; false when its worker has given up on it.
    fileprivate func start() -> Bool {
        state.withLock { phase in
            guard case .queued = phase else { return false }
            phase = .sending
            return true
        }
    }

    fileprivate func finish(delivered: Bool) {
        state.withLock { phase in
            switch phase {
            case .queued, .sending: phase = delivered ? .delivered : .failed
            case .delivered, .failed, .abandoned: break
            }
        }
        done.signal()
    }

    /// The worker waits up to `timeout` nanoseconds for the server to have taken the request. True when it
    /// has: the connection may run its next statement. Otherwise the request is abandoned, and the caller
    /// must close the connection.
    func settle(timeout: UInt64, canceller: PostgresCanceller) -> Bool {
        _ = done.wait(timeout: DispatchTime(uptimeNanoseconds: DispatchTime.now().uptimeNanoseconds &+ timeout))
        let delivered: Bool = state.withLock { phase in
            if case .delivered = phase { return true }
            phase = .abandoned
            return false
        }
        if !delivered { canceller.withdraw(self) }
        return delivered
    }
}
