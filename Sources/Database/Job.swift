import Foundation
import Synchronization

/// One unit of work for a pool thread: a closure, or a single statement (which a worker may send in a
/// pipeline with others). Its outcome is reported exactly once: its result, a failure (pool timeout,
/// shutdown, connection), or `CancellationError` when the caller's task was cancelled.
///
/// Cancellation depends on where the job is (see `cancel()`): waiting, it leaves the queue and fails at
/// once; running alone on a connection, the pool's cancel thread asks the server to cancel it
/// (`PostgresCanceller`), and the caller gets `CancellationError` when its statement has ended; sent in a pipeline, it runs to the end
/// (cancelling it on the server could hit a neighbour in the batch) and its outcome is discarded, while the
/// caller gets `CancellationError` at once.
final class Job: Sendable {
    let deadline: UInt64
    let enqueued: UInt64
    /// Set for a single statement, which the worker may send in a pipeline with others.
    let statement: SQLQuery?
    private let state = Mutex(State())

    /// How the job reports its outcome; attached when the caller's continuation exists.
    enum Completion: Sendable {
        /// A single statement: its rows or its error.
        case rows(@Sendable (Result<PostgresRows, any Error>) -> Void)
        /// A closure: `run` calls it on a connection and returns how to report its outcome (with `true`
        /// when the job was cancelled while it ran); `fail` reports an error instead of running it.
        case closure(run: @Sendable (PostgresConnection) -> @Sendable (_ cancelled: Bool) -> Void, fail: @Sendable (any Error) -> Void)

        func fail(_ error: any Error) {
            switch self {
            case .rows(let complete): complete(.failure(error))
            case .closure(_, let fail): fail(error)
            }
        }
    }

    private struct State {
        var phase = Phase.new
        var cancelled = false
        var completion: Completion?
        /// The cancel request sent while the job ran alone, which its worker settles before reusing the connection.
        var request: CancelRequest?
    }

    /// What interrupts a job running alone: its connection's cancel object, and the thread that sends it.
    struct Interruption: Sendable {
        let handle: PostgresCancelHandle
        let canceller: PostgresCanceller
    }

    private enum Phase {
        /// Created; not in the queue yet.
        case new
        /// In the queue, or taken by a worker that has not started it.
        case waiting
        /// Running alone on a connection, which this can interrupt.
        case running(Interruption?)
        /// Sent in a pipeline: it runs to the end.
        case sent
        /// Its outcome has been reported (or is being reported by the worker that ended it).
        case done
    }

    /// A job that may wait `timeout` nanoseconds for a connection.
    init(timeout: UInt64, statement: SQLQuery? = nil) {
        let now = DispatchTime.now().uptimeNanoseconds
        self.enqueued = now
        self.deadline = now &+ timeout
        self.statement = statement
    }

    /// Attaches the completion before the job enters the queue; false when its task was cancelled first.
    /// Called with the queue's lock held, so a cancellation either sees the job in the queue or stops it here.
    func attach(_ completion: Completion) -> Bool {
        state.withLock { state in
            state.completion = completion
            if state.cancelled {
                state.phase = .done
                return false
            }
            state.phase = .waiting
            return true
        }
    }

    var isCancelled: Bool {
        state.withLock { $0.cancelled }
    }

    /// Marks the job cancelled (`onCancel` of the caller's task). Returns true when it is waiting, and the
    /// caller should take it out of the queue; a pipelined one is failed. For a running job a cancel request
    /// goes to the pool's cancel thread: this returns without waiting for the server, on any thread.
    func cancel() -> Bool {
        let (dequeue, failNow, interrupt): (Bool, Completion?, (CancelRequest, PostgresCanceller)?) = state.withLock { state in
            guard !state.cancelled else { return (false, nil, nil) }
            state.cancelled = true
            switch state.phase {
            case .new, .done:
                return (false, nil, nil)
            case .waiting:
                return (true, nil, nil)
            case .running(let interruption):
                // Recorded under the job's lock: the worker that ends the job finds it, and settles it before
                // the connection runs another statement, so a late cancel never hits one.
                guard let interruption else { return (false, nil, nil) }
                let request = CancelRequest(handle: interruption.handle)
                state.request = request
                return (false, nil, (request, interruption.canceller))
            case .sent:
                state.phase = .done
                return (false, state.completion, nil)
            }
        }
        if let (request, canceller) = interrupt { canceller.submit(request) }
        failNow?.fail(CancellationError())
        return dequeue
    }

    /// The worker that took the job is about to run it alone on a connection that `interruption` interrupts.
    /// Returns its completion, or nil when it was cancelled meanwhile (it has then been failed).
    func begin(cancel interruption: Interruption?) -> Completion? {
        let (completion, cancelled): (Completion?, Bool) = state.withLock { state in
            guard case .waiting = state.phase else { return (nil, false) }
            if state.cancelled {
                state.phase = .done
                return (state.completion, true)
            }
            state.phase = .running(interruption)
            return (state.completion, false)
        }
        if cancelled {
            completion?.fail(CancellationError())
            return nil
        }
        return completion
    }

    /// The job ran alone and left the connection; returns whether it was cancelled while it ran, and the
    /// cancel request its worker must settle before the connection runs anything else.
    func end() -> (cancelled: Bool, request: CancelRequest?) {
        state.withLock { state in
            state.phase = .done
            return (state.cancelled, state.request)
        }
    }

    /// The worker is about to send the statement in a pipeline; false when it was cancelled meanwhile
    /// (it has then been failed).
    func beginPipelined() -> Bool {
        let (failed, sent): (Completion?, Bool) = state.withLock { state in
            guard case .waiting = state.phase else { return (nil, false) }
            if state.cancelled {
                state.phase = .done
                return (state.completion, false)
            }
            state.phase = .sent
            return (nil, true)
        }
        failed?.fail(CancellationError())
        return sent
    }

    /// Reports a pipelined statement's outcome, unless its caller has gone.
    func report(_ result: Result<PostgresRows, any Error>) {
        let completion: Completion? = state.withLock { state in
            guard case .sent = state.phase else { return nil }
            state.phase = .done
            return state.completion
        }
        if case .rows(let complete) = completion { complete(result) }
    }

    /// Fails the job instead of running it, unless its outcome has been reported already.
    func fail(_ error: any Error) {
        let completion: Completion? = state.withLock { state in
            switch state.phase {
            case .done, .running, .sent: return nil
            case .new, .waiting:
                state.phase = .done
                return state.completion
            }
        }
        completion?.fail(error)
    }
}
