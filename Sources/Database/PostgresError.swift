/// An error from the data layer. It carries PostgreSQL's SQLSTATE when the server sent one, so callers can
/// turn constraint violations into domain errors instead of 500s.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable, Equatable {
        /// The database could not be reached, or the connection broke mid-call.
        case connection
        /// No pool connection became free before the caller's deadline.
        case poolTimeout
        /// `PostgresConfiguration.maxWaitingJobs` jobs were already waiting for a connection: refused at once.
        case queueFull
        /// The server rejected or failed the statement; see `sqlState`.
        case server
        /// A column could not be decoded into the requested Swift type.
        case decoding
        /// The pool has been shut down.
        case shutdown
    }

    public var kind: Kind
    public var message: String
    /// Five-character SQLSTATE code (`23505` unique violation, `57014` statement timeout, …).
    public var sqlState: String?
    /// The violated constraint's name, when PostgreSQL reported one.
    public var constraint: String?
    public var detail: String?

    public init(kind: Kind, message: String, sqlState: String? = nil, constraint: String? = nil, detail: String? = nil) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.constraint = constraint
        self.detail = detail
    }

    public var isUniqueViolation: Bool { sqlState == "23505" }
    public var isForeignKeyViolation: Bool { sqlState == "23503" }
    public var isStatementTimeout: Bool { sqlState == "57014" }

    /// True when the failure is about the database being unreachable, overloaded or too slow, rather than
    /// about the statement itself: the HTTP layer answers these with 503 `database_unavailable`.
    public var isUnavailable: Bool {
        switch kind {
        case .connection, .poolTimeout, .queueFull, .shutdown: return true
        case .decoding: return false
        case .server:
            guard let state = sqlState else { return false }
            // 57014 statement timeout / query_canceled, 57P0x admin shutdown / crash / cannot connect now,
            // 08xxx connection exceptions, 53xxx insufficient resources.
            return state == "57014" || state.hasPrefix("57P") || state.hasPrefix("08") || state.hasPrefix("53")
        }
    }

    public var description: String {
        var text = "PostgresError(\(kind)"
        if let sqlState { text += ", sqlstate \(sqlState)" }
        text += "): \(message)"
        if let constraint { text += " [constraint \(constraint)]" }
        if let detail { text += " — \(detail)" }
        return text
    }
}
