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
