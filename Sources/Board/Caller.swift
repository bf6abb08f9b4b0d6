import Database

/// Who makes a write: a bearer token (`SessionGate`) or a caller checked already. Either way the write's own
/// transaction checks the session first (`identity(on:)`), so a signed-in write crosses the data layer once, and a
/// logout, a ban, a deletion or an upgrade either commits before the write starts deciding (which then sees it) or
/// waits until the write has committed: never a write let through by a check that a revocation overtook.
public struct Caller: Sendable {
    enum Source: Sendable {
        case token(SessionGate)
        case checked(Identity)
    }

    let source: Source

    /// A token still to be checked (or checked by an earlier statement of the request).
    public init(_ gate: SessionGate) { source = .token(gate) }

    /// A caller checked already (operator commands, tests); its session is checked again inside the write.
    public init(_ identity: Identity) { source = .checked(identity) }

    /// How the write locks its caller's rows (`SessionGate.locked`).
    public enum Lock: Sendable {
        /// `FOR SHARE` of the session and the account: a revocation, a deletion, a ban or a role change waits for
        /// the write.
        case share
        /// `FOR SHARE` of the session, `FOR NO KEY UPDATE` of the account: for a write that must take its account's
        /// writes one at a time (devices, settings).
        case updatingAccount
        /// `FOR SHARE` of the session alone: for a write whose own statement updates its account row (the inbox
        /// marker). A share of the account would deadlock two of them (each holding one, each waiting for the
        /// other's).
        case session
        /// `FOR UPDATE` of the session and the account: for a write that revokes the session or deletes the account.
        case exclusive
    }

    /// The caller, as its session is now: checked by the first statement of the transaction on `connection`, which
    /// locks the session's and the account's rows until the transaction ends. `unauthenticated` when the session is
    /// gone (never was, revoked, account deleted).
    func identity(on connection: PostgresConnection, lock: Lock = .share) throws -> Identity {
        switch source {
        case .token(let gate):
            return try gate.check(on: connection, lock: lock)
        case .checked(let identity):
            guard let row = try connection.query(SessionGate.locked(SessionGate.session(id: identity.sessionID), lock)).first else {
                throw BoardError.unauthenticated
            }
            return try SessionGate.identity(from: row)
        }
    }

    /// The caller checked now, by a statement of its own unless a check has run: for the writes that must know who
    /// before their transaction (a post's media are read for the term filter).
    public func resolve() async throws -> Identity {
        switch source {
        case .token(let gate): try await gate.resolve()
        case .checked(let identity): identity
        }
    }
}
