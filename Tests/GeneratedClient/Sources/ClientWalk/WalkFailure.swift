import Foundation

/// A step of the walk that did not get the answer it expected: an undocumented status (the generated
/// `.undocumented` case), a documented but unexpected one, or a body the generated types could not decode
/// (the generated client throws `ClientError` for that, which `step` reports with the step's name).
struct WalkFailure: Error, CustomStringConvertible {
    let step: String
    let detail: String

    var description: String { "step '\(step)' failed: \(detail)" }

    /// Calls the operation and picks the expected case out of its output (the generated accessors, such as
    /// `.created`, throw for any other case).
    static func step<Output, Value>(
        _ name: String,
        _ call: () async throws -> Output,
        expect pick: (Output) throws -> Value
    ) async throws -> Value {
        let output: Output
        do {
            output = try await call()
        } catch {
            throw WalkFailure(step: name, detail: "the client threw (transport error or undecodable body): \(error)")
        }
        let text = String(describing: output)
        if text.hasPrefix("undocumented(") {
            throw WalkFailure(step: name, detail: "undocumented status: \(text.prefix(300))")
        }
        do {
            return try pick(output)
        } catch {
            throw WalkFailure(step: name, detail: "unexpected response: \(text.prefix(300))")
        }
    }

    /// Fails the walk unless `condition` holds.
    static func check(_ condition: Bool, _ step: String, _ detail: @autoclosure () -> String) throws {
        if !condition { throw WalkFailure(step: step, detail: detail()) }
    }
}

extension WalkFailure {
    /// Runs `body` and fails the step if it has not finished within `seconds`, naming what it was `waiting` for then;
    /// `body` is cancelled when the time is up.
    static func within<Value: Sendable>(
        seconds: Int, _ step: String, _ waiting: WaitingFor, _ body: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw WalkFailure(step: step, detail: "nothing within \(seconds) s: still waiting for \(waiting.value)")
            }
            return value
        }
    }
}

/// What a timed step is waiting for, for its failure message.
final class WaitingFor: @unchecked Sendable {
    private let lock = NSLock()
    private var what: String

    init(_ what: String) { self.what = what }

    var value: String { lock.withLock { what } }
    func set(_ what: String) { lock.withLock { self.what = what } }
}
