import Synchronization

/// A result delivered once to one waiting continuation, whichever comes first: the work, the time limit or
/// the caller's cancellation. Later deliveries are dropped.
final class PendingResult<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, any Error>)
        case finished(Result<Value, any Error>)
        case delivered
    }

    private let state = Mutex<State>(.empty)

    func wait(_ continuation: CheckedContinuation<Value, any Error>) {
        let ready: Result<Value, any Error>? = state.withLock { state in
            switch state {
            case .empty:
                state = .waiting(continuation)
                return nil
            case .finished(let result):
                state = .delivered
                return result
            case .waiting, .delivered:
                // Only one caller waits; a second wait gets nothing rather than trapping.
                return .failure(CancellationError())
            }
        }
        if let ready { continuation.resume(with: ready) }
    }

    func finish(_ result: Result<Value, any Error>) {
        let waiting: CheckedContinuation<Value, any Error>? = state.withLock { state in
            switch state {
            case .empty:
                state = .finished(result)
                return nil
            case .waiting(let continuation):
                state = .delivered
                return continuation
            case .finished, .delivered:
                return nil
            }
        }
        waiting?.resume(with: result)
    }
}
