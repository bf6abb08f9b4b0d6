/// A request body that stopped arriving (`BODY_TIMEOUT_SECONDS`) or did not arrive whole in time
/// (`REQUEST_BODY_DEADLINE_SECONDS`): raised by `ConnectionGuard` into the body the handler reads, and answered
/// 408 `request_timeout`.
struct RequestBodyTimeout: Error, Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case stalled
        case deadline
    }

    let kind: Kind
    let seconds: Int64

    var description: String {
        switch kind {
        case .stalled: "no byte of the request body arrived for \(seconds) s"
        case .deadline: "the request body did not arrive whole within \(seconds) s"
        }
    }

    var apiError: APIError { .requestTimeout(description) }
}
