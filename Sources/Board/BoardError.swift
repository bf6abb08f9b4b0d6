/// What the board's rules can refuse. The HTTP layer maps each case to the contract's status and code.
public enum BoardError: Error, Equatable, Sendable {
    case unauthenticated
    case invalidCredentials
    case forbidden(String)
    case notOwner
    case accountBanned(until: String?)
    case notFound(String)
    case usernameTaken
    case alreadyRegistered
    case idempotencyConflict
    /// 422 `invalid_field`; the message names the field.
    case invalidField(field: String, message: String)
    case rateLimited(retryAfterSeconds: Int)
    /// 412 `precondition_failed`: the edit's `If-Match` names a version that is no longer current.
    case preconditionFailed
}
