import Board
import RateLimit

extension APIError {
    /// The contract's status and code for each of the board's refusals.
    init(_ error: BoardError) {
        switch error {
        case .unauthenticated:
            self = .unauthenticated
        case .invalidCredentials:
            self.init(.unauthorized, "invalid_credentials", "the username or password is wrong")
        case .forbidden(let message):
            self.init(.forbidden, "forbidden", message)
        case .notOwner:
            self.init(.forbidden, "not_owner", "only the author may do this")
        case .accountBanned(let until):
            self.init(.forbidden, "account_banned", until.map { "this account is banned until \($0)" } ?? "this account is banned")
        case .notFound(let what):
            self = .notFound(what)
        case .usernameTaken:
            self.init(.conflict, "username_taken", "that username is taken")
        case .alreadyRegistered:
            self.init(.conflict, "already_registered", "this account already has a username and password")
        case .idempotencyConflict:
            self.init(.conflict, "idempotency_conflict", "this Idempotency-Key was used with a different request")
        case .invalidField(let field, let message):
            self = .invalidField(field, message)
        case .preconditionFailed:
            self.init(.preconditionFailed, "precondition_failed", "it has changed since that version (If-Match); fetch it again")
        case .rateLimited(let seconds):
            self.init(RateLimitExceeded(retryAfterSeconds: seconds))
        }
    }

    /// 429 `rate_limited` with `Retry-After`.
    init(_ error: RateLimitExceeded) {
        let seconds = error.retryAfterSeconds
        self.init(.tooManyRequests, "rate_limited", "too many requests; try again in \(seconds) s", retryAfter: seconds)
    }
}
