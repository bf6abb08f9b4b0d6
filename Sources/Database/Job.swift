import Foundation

/// One unit of work for a pool thread: a closure, or a single statement. Exactly one of `run` or `fail`
/// is called, exactly once (for a statement in a pipeline, the worker calls `statement.complete` instead).
final class Job: @unchecked Sendable {
    // Safety: fields are immutable; the queue's lock decides which single thread calls run or fail.
    let deadline: UInt64
    let enqueued = DispatchTime.now().uptimeNanoseconds
    private let body: ((PostgresConnection) -> Void)?
    private let failure: ((any Error) -> Void)?
    /// Set for a single statement, which the worker may send in a pipeline with others.
    let statement: Statement?

    /// A single statement and what to do with its outcome.
    struct Statement {
        let query: SQLQuery
        let complete: (Result<PostgresRows, any Error>) -> Void
    }

    init(deadline: UInt64, run: @escaping (PostgresConnection) -> Void, fail: @escaping (any Error) -> Void) {
        self.deadline = deadline
        self.body = run
        self.failure = fail
        self.statement = nil
    }

    init(deadline: UInt64, statement: Statement) {
        self.deadline = deadline
        self.body = nil
        self.failure = nil
        self.statement = statement
    }

    func run(_ connection: PostgresConnection) {
        if let statement {
            statement.complete(Result { try connection.query(statement.query) })
        } else {
            body?(connection)
        }
    }

    func fail(_ error: any Error) {
        if let statement {
            statement.complete(.failure(error))
        } else {
            failure?(error)
        }
    }
}
